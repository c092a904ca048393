import { asyncScheduler, Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import {
  isKnownEvent,
  type AskUserEvent,
  type EvoEvent,
  type InterruptEvent,
  type UnknownEvent,
} from '../src/events.js';
import { DelegationTracker, type Delegation } from './DelegationTracker.js';
import type { UsageTotals } from './sumUsage.js';
import { ToolCallTracker, type ToolInvocation } from './ToolCallTracker.js';

/**
 * One tool invocation in a `RunSummary`: its final state without the events
 * and the output, so a summary stays small however much the tools returned.
 */
export type InvocationSummary = Pick<
  ToolInvocation,
  'key' | 'id' | 'name' | 'args' | 'subagent' | 'status' | 'startedAt' | 'endedAt'
> & {
  /** The result's content of a failed invocation: what went wrong. */
  readonly error?: string;
};

/** One delegation in a `RunSummary`. */
export type DelegationSummary = Pick<Delegation, 'key' | 'name' | 'description' | 'taskCallId'> & {
  /** Its `subagent_*` events. */
  readonly events: number;
  /** Whether its `subagent_end` arrived before the stream ended. */
  readonly ended: boolean;
};

/** Everything a run did, as `summarize` reports it at completion. */
export interface RunSummary {
  /** `done.response`, or `undefined` when the stream ended without `done`. */
  readonly response: string | undefined;
  /** The concatenated main-agent `text` deltas. */
  readonly text: string;
  readonly usage: UsageTotals;
  /** Every invocation in its final state, in the order first seen. */
  readonly invocations: readonly InvocationSummary[];
  /** Every delegation, in start order. */
  readonly delegations: readonly DelegationSummary[];
  /** The messages of `error` events. */
  readonly errors: readonly string[];
  readonly interrupts: readonly InterruptEvent[];
  readonly questions: readonly AskUserEvent[];
  /** Events seen, by `type` (unknown types included when kept). */
  readonly counts: Readonly<Record<string, number>>;
  readonly events: number;
}

const TEXT_BATCH = 512;

/**
 * One `RunSummary` when the source completes: the final response, usage
 * totals, every tool invocation in its final state (without its output, which
 * `pairToolCalls` gives as it comes), every delegation with its
 * event count, errors, interrupts and questions, and event counts by type.
 * It pairs and groups in the same single pass as `pairToolCalls` and
 * `groupSubagents`, so it subscribes to the source once.
 *
 * An error of the source is passed on and no summary is emitted; to summarize
 * a failed run, catch first: `run$.pipe(catchError(() => EMPTY), summarize())`.
 *
 * ```ts
 * const summary = await lastValueFrom(run$.pipe(summarize()));
 * console.log(summary.response, summary.usage.totalTokens, summary.invocations.length);
 * ```
 *
 * ```
 * source:      --t--c--r--u--d--|
 * summarize(): -----------------(s|)
 * ```
 */
export function summarize(
  options: { readonly scheduler?: SchedulerLike } = {},
): OperatorFunction<EvoEvent | UnknownEvent, RunSummary> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    new Observable<RunSummary>((subscriber) => {
      // An invocation's slot is taken when it opens, to keep first-seen order; its
      // summary is built once, when it closes: while open, the tracker holds it.
      const invocations = new Map<string, InvocationSummary | undefined>();
      const keep = (i: ToolInvocation) => {
        if (i.status === 'running') {
          if (!invocations.has(i.key)) invocations.set(i.key, undefined);
          return;
        }
        invocations.set(i.key, {
          key: i.key,
          id: i.id,
          name: i.name,
          args: i.args,
          subagent: i.subagent,
          status: i.status,
          error: i.status === 'failed' ? i.result : undefined,
          startedAt: i.startedAt,
          endedAt: i.endedAt,
        });
      };
      const delegations: Delegation[] = [];
      const tools = new ToolCallTracker(() => scheduler.now());
      const subagents = new DelegationTracker({
        start: (delegation) => delegations.push(delegation),
        event: () => undefined,
        end: () => undefined,
      });
      const counts = new Map<string, number>();
      const errors: string[] = [];
      const interrupts: InterruptEvent[] = [];
      const questions: AskUserEvent[] = [];
      let response: string | undefined;
      // Deltas are joined a batch at a time: one rope node per delta would keep
      // hundreds of thousands of small strings alive until the end.
      const textParts: string[] = [];
      let deltas: string[] = [];
      let inputTokens = 0;
      let outputTokens = 0;
      let events = 0;

      const take = (event: EvoEvent) => {
        switch (event.type) {
          case 'text':
            if (deltas.push(event.content) === TEXT_BATCH) {
              textParts.push(deltas.join(''));
              deltas = [];
            }
            return;
          case 'usage_stats':
            inputTokens += event.input_tokens;
            outputTokens += event.output_tokens;
            return;
          case 'done':
            response = event.response;
            return;
          case 'error':
            errors.push(event.message);
            return;
          case 'interrupt':
            interrupts.push(event);
            return;
          case 'ask_user':
            questions.push(event);
            return;
          case 'tool_call':
          case 'tool_result':
          case 'subagent_tool_call':
          case 'subagent_tool_result': {
            const snapshot = tools.push(event);
            if (snapshot) keep(snapshot);
            subagents.push(event);
            return;
          }
          case 'subagent_start':
          case 'subagent_end':
          case 'subagent_text':
            subagents.push(event);
        }
      };
      const summary = (): RunSummary => {
        for (const snapshot of tools.finish()) keep(snapshot);
        const open = new Set(delegations.filter((d) => d.open));
        subagents.finish();
        return {
          response,
          text: textParts.join('') + deltas.join(''),
          usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
          invocations: [...invocations.values()].filter((i): i is InvocationSummary => i !== undefined),
          delegations: delegations.map((d) => ({
            key: d.key,
            name: d.name,
            description: d.description,
            taskCallId: d.taskCallId,
            events: d.events,
            ended: !open.has(d),
          })),
          errors,
          interrupts,
          questions,
          counts: Object.fromEntries(counts),
          events,
        };
      };

      return source.subscribe({
        next: (event) => {
          events++;
          counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
          if (!isKnownEvent(event)) return;
          try {
            take(event);
          } catch (err) {
            subscriber.error(err);
          }
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => {
          let result: RunSummary;
          try {
            result = summary();
          } catch (err) {
            return subscriber.error(err);
          }
          subscriber.next(result);
          subscriber.complete();
        },
      });
    });
}
