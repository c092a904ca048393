import { filter, type OperatorFunction } from 'rxjs';

/**
 * Lets through the events of the given types, narrowed to them.
 *
 * ```ts
 * run$.pipe(ofType('tool_call', 'subagent_tool_call'))
 *   .subscribe((call) => console.log(call.name, call.args)); // ToolCallEvent | SubagentToolCallEvent
 * ```
 *
 * ```
 * source:            --t--c--r--c--|      t: text, c: tool_call, r: tool_result
 * ofType('tool_call'): -----c-----c--|
 * ```
 */
export function ofType<
  E extends {
    /** The discriminant the events are filtered on. */
    readonly type: string;
  },
  K extends E['type'],
>(
  ...types: readonly [K, ...K[]]
): OperatorFunction<
  E,
  Extract<
    E,
    {
      /** One of the types asked for. */
      readonly type: K;
    }
  >
> {
  const wanted = new Set<string>(types);
  return filter((event): event is Extract<E, { readonly type: K }> => wanted.has(event.type));
}
