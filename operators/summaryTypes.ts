// What `summarize()` reports: types only, shared by the model and book that make a summary and those who read one.
import type { AskUserEvent, InterruptEvent } from '../src/events/codecs.js';
import type { SubagentRun } from './subagentRun.js';
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

/** One delegation in a `RunSummary`: a `SubagentRun` with the number of its events in place of them. */
export type DelegationSummary = Omit<SubagentRun, 'events$'> & {
  /** Its `subagent_*` events. */
  readonly events: number;
};

/** A sub-agent task started from code (`panel_dispatch_*` events), in a `RunSummary`. */
export interface PanelDispatchSummary {
  /** The producer's id of the dispatch (`id` of its events). */
  readonly id: string;
  /** The `code_interpreter` call it ran inside; `''` when the producer did not know it. */
  readonly evalId: string;
  /** The sub-agent type it dispatched to. */
  readonly subagentType: string;
  /** Its label, as the code named it. */
  readonly label: string;
  /** What it was asked to do. */
  readonly description: string;
  /** `unfinished`: the stream ended before it completed or failed. */
  readonly status: 'completed' | 'failed' | 'unfinished';
  /** How long it took, as its `panel_dispatch_complete` or `panel_dispatch_error` said. */
  readonly durationMs?: number;
  /** Why it failed, for a `failed` one. */
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
  /** How the run ended: see `RunOutcome`. */
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
  /** Every `ask_user` of the run, answered or not. */
  readonly questions: readonly AskUserEvent[];
  /**
   * The approvals and questions the run stopped at. A run that resumes the
   * thread sends its prompt as a new message, which the agent reads as a new
   * request: the paused call itself is never answered.
   */
  readonly pendingApprovals: readonly InterruptEvent[];
  /** The questions the run stopped at, unanswered: see `pendingApprovals`. */
  readonly pendingQuestions: readonly AskUserEvent[];
  /** Events seen, by `type` (unknown types included when kept). */
  readonly counts: Readonly<Record<string, number>>;
  /** Events seen in all. */
  readonly events: number;
}
