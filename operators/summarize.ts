import {
  asyncScheduler,
  defer,
  finalize,
  map,
  reduce,
  tap,
  type Observable,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import type { AskUserEvent, EvoEvent, InterruptEvent, UnknownEvent } from '../src/events.js';
import { Followed, type TallyFollower } from './Followed.js';
import { RunTally } from './RunTally.js';
import type { UsageTotals } from './sumUsage.js';
import type { ToolInvocation } from './ToolCallTracker.js';

/**
 * One tool invocation in a `RunSummary`: its final state without the events
 * and the output, so a summary stays small however much the tools returned.
 */
export type InvocationSummary = Pick<
  ToolInvocation,
  'key' | 'id' | 'name' | 'args' | 'subagent' | 'instanceId' | 'status' | 'startedAt' | 'endedAt'
> & {
  /** The result's content of a failed invocation: what went wrong. */
  readonly error?: string;
};

/** One delegation in a `RunSummary`. */
export interface DelegationSummary {
  /** Its `instance_id`; else the id of the `task` call that started it; else `subagent#n`. */
  readonly key: string;
  /** The producer's id of this delegation (0.2.x); absent in streams without one. */
  readonly instanceId?: string;
  /** Its latest name. */
  readonly name: string;
  /** The `subagent_type` of its `task` call, when the stream shows it. */
  readonly subagentType?: string;
  /** What it was asked to do: its `subagent_start`'s description, else its `task` call's. */
  readonly description: string;
  /** The `task` call's id, when one was seen. */
  readonly taskCallId?: string;
  /** Its `subagent_*` events. */
  readonly events: number;
  /** Whether its `subagent_end` arrived before the stream ended. */
  readonly ended: boolean;
}

/** A sub-agent task started from code (`panel_dispatch_*` events), in a `RunSummary`. */
export interface PanelDispatchSummary {
  readonly id: string;
  /** The `code_interpreter` call it ran inside; `''` when the producer did not know it. */
  readonly evalId: string;
  readonly subagentType: string;
  readonly label: string;
  readonly description: string;
  /** `unfinished`: the stream ended before it completed or failed. */
  readonly status: 'completed' | 'failed' | 'unfinished';
  readonly durationMs?: number;
  readonly error?: string;
}

/**
 * How a run ended, from its events:
 * - `completed`: `done`, nothing left to answer;
 * - `needs-input`: `done` right after an `interrupt` or `ask_user` the run did
 *   not go past (`--no-auto-mode`; the producer exits 0). A run that resumes
 *   the thread sends a new message; the paused call never gets its answer;
 * - `failed`: an `error` event;
 * - `incomplete`: no `done` (the stream was cut, or the run was stopped).
 */
export type RunOutcome = 'completed' | 'needs-input' | 'failed' | 'incomplete';

/** Everything a run did, as `summarize` reports it at completion. */
export interface RunSummary {
  readonly outcome: RunOutcome;
  /**
   * `done.response`, absent when the stream ended without `done`: the
   * main agent's text of the whole run, not a separate final answer.
   */
  readonly response?: string;
  /** The concatenated main-agent `text` deltas. */
  readonly text: string;
  /** The main agent's tokens: sub-agents spend tokens that no event reports. */
  readonly usage: UsageTotals;
  /** Every invocation in its final state, in the order first seen. */
  readonly invocations: readonly InvocationSummary[];
  /** Every delegation, in start order. */
  readonly delegations: readonly DelegationSummary[];
  /** Every panel dispatch, in start order. */
  readonly panelDispatches: readonly PanelDispatchSummary[];
  /** The messages of `error` events. */
  readonly errors: readonly string[];
  /** Every approval request and every question, answered or not. */
  readonly interrupts: readonly InterruptEvent[];
  readonly questions: readonly AskUserEvent[];
  /**
   * The approvals and questions the run stopped at. A run that resumes the
   * thread sends its prompt as a new message, which the agent reads as a new
   * request: the paused call itself is never answered.
   */
  readonly pendingApprovals: readonly InterruptEvent[];
  readonly pendingQuestions: readonly AskUserEvent[];
  /** Events seen, by `type` (unknown types included when kept). */
  readonly counts: Readonly<Record<string, number>>;
  readonly events: number;
}

/**
 * One `RunSummary` when the source completes: how the run ended, the final
 * response, the main agent's token totals, every tool invocation in its final state (without
 * its output, which `pairToolCalls` gives as it comes), every delegation and
 * panel dispatch, errors, the questions and approvals (and which of them the
 * run stopped at), and event counts by type. It pairs and groups in the same
 * single pass as `pairToolCalls` and `groupSubagents`, so it subscribes to
 * the source once. An exception while summarizing errors the subscriber.
 *
 * An error of the source is passed on and no summary is emitted; to summarize
 * a failed run, catch first: `run$.pipe(catchError(() => EMPTY), summarize())`.
 *
 * Right after `traceRun()`, the trace follows this summary's tally rather
 * than keeping its own: each event is taken once, for both.
 *
 * ```ts
 * const summary = await lastValueFrom(run$.pipe(summarize()));
 * if (summary.outcome === 'needs-input') console.log(summary.pendingQuestions);
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
    defer(() => {
      const tally = new RunTally(() => scheduler.now());
      if (!(source instanceof Followed)) return tallied(source, tally);
      const { upstream, follow } = source as Followed<EvoEvent | UnknownEvent>;
      const follower = follow(tally);
      return follower === undefined ? tallied(upstream, tally) : followed(upstream, tally, follower);
    });
}

function tallied(events$: Observable<EvoEvent | UnknownEvent>, tally: RunTally): Observable<RunSummary> {
  return events$.pipe(
    reduce((t, event) => t.push(event), tally),
    map((t) => t.summary()),
  );
}

/**
 * The summary, with a follower listening to its tally. Told how the run
 * ended after the `reduce`, where that costs nothing per event; told it
 * completed before the summary is made, as it would be before `summarize`.
 */
function followed(
  events$: Observable<EvoEvent | UnknownEvent>,
  tally: RunTally,
  follower: TallyFollower,
): Observable<RunSummary> {
  return events$.pipe(
    reduce((t, event) => t.push(event), tally),
    tap({ error: (error: unknown) => follower.fail(error) }),
    map((t) => {
      follower.complete();
      return t.summary();
    }),
    finalize(() => follower.close()),
  );
}
