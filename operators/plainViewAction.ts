import type { SubagentRun } from './groupSubagents.js';
import type { ViewAction } from './viewActions.js';

/**
 * A delegation as plain data: what its `SubagentRun` said at one moment,
 * without its `events$`. Ids the stream did not give are left out.
 */
// `events$?: never`, so that a live action given where a plain one is expected fails to compile.
export type PlainSubagentRun = Omit<SubagentRun, 'events$'> & {
  /** Never set: a plain delegation has no live events. */
  readonly events$?: never;
};

/** An action with its `delegation`, where it has one, as a `PlainSubagentRun`; every other field as it was. */
type WithPlainDelegation<A> = A extends unknown
  ? 'delegation' extends keyof A
    ? { readonly [K in keyof A]: K extends 'delegation' ? PlainSubagentRun | Exclude<A[K], SubagentRun> : A[K] }
    : A
  : never;

/** A `ViewAction` as plain data, for stores that take only serializable actions (Redux, NgRx, `postMessage`). */
export type PlainViewAction = WithPlainDelegation<ViewAction>;

/** The fields of a delegation now: its getters read live state, which a stored copy must not follow. */
function plainSubagentRun(run: SubagentRun): PlainSubagentRun {
  const { key, instanceId, name, subagentType, description, taskCallId, ended } = run;
  return {
    key,
    ...(instanceId !== undefined && { instanceId }),
    name,
    ...(subagentType !== undefined && { subagentType }),
    description,
    ...(taskCallId !== undefined && { taskCallId }),
    ended,
  };
}

/**
 * A `ViewAction` as plain data: its `delegation` becomes a copy of that
 * delegation's fields, without the live `events$` (an Observable, which a
 * Redux store's serializability check rejects and no store can keep). The
 * other actions are plain already: they come back as they are.
 *
 * ```ts
 * run$.pipe(viewActions(), map(plainViewAction)).subscribe((action) => store.dispatch(viewed(action)));
 * ```
 */
export function plainViewAction(action: ViewAction): PlainViewAction {
  switch (action.kind) {
    case 'tool': {
      const { delegation, ...rest } = action;
      return delegation === undefined ? rest : { ...rest, delegation: plainSubagentRun(delegation) };
    }
    case 'subagent-start':
    case 'subagent-end':
      return { ...action, delegation: plainSubagentRun(action.delegation) };
    default:
      // A kind that gains a delegation no longer compiles here.
      return action;
  }
}
