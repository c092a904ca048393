import type {
  AskUserEvent,
  DoneEvent,
  ErrorEvent,
  InterruptEvent,
  PanelDispatchCompleteEvent,
  PanelDispatchErrorEvent,
  PanelDispatchStartEvent,
  SubagentToolCallEvent,
  SubagentToolResultEvent,
  ToolCallEvent,
  ToolResultEvent,
} from '../src/events/codecs.js';
import type { RunDelegation, SubagentEvent } from './delegations.js';
import type { PanelDispatchSummary, RunSummary } from './summaryTypes.js';
import type { UsageTotals } from './sumUsage.js';
import type { ToolInvocation } from './ToolCallTracker.js';

export type { RunDelegation } from './delegations.js';

/** A `panel_dispatch_*` event. */
export type PanelDispatchEvent = PanelDispatchStartEvent | PanelDispatchCompleteEvent | PanelDispatchErrorEvent;

/**
 * One change to the state of a run, as `RunModel` makes it from an event (or,
 * for what is still open, when its sub-agent or the run ends): what
 * `viewActions()` maps and `traceRun()` turns into spans.
 *
 * `text`, `thinking` and `delegation-event` are the changes most events make;
 * a listener hears them only when it asks to (`{ deltas: true }`).
 */
export type RunChange =
  /** A main-agent text delta. */
  | { readonly kind: 'text'; readonly delta: string }
  /** A thinking block of the main agent. */
  | { readonly kind: 'thinking'; readonly content: string }
  /**
   * A new snapshot of an invocation. `event` made it: none when the end of
   * its sub-agent, or of the run, closed it. `delegation`: the sub-agent it ran in.
   */
  | {
      readonly kind: 'invocation';
      readonly invocation: ToolInvocation;
      readonly event: ToolCallEvent | ToolResultEvent | SubagentToolCallEvent | SubagentToolResultEvent | undefined;
      readonly delegation: RunDelegation | undefined;
    }
  | { readonly kind: 'delegation-start'; readonly delegation: RunDelegation }
  /** An event made inside a delegation, routed to it. */
  | { readonly kind: 'delegation-event'; readonly delegation: RunDelegation; readonly event: SubagentEvent }
  /** Its `subagent_end` came (`delegation.ended`), or the run ended first. */
  | { readonly kind: 'delegation-end'; readonly delegation: RunDelegation }
  /** A panel dispatch started or ended: `panel` is its state now, `event` what changed it. */
  | { readonly kind: 'panel'; readonly panel: PanelDispatchSummary; readonly event: PanelDispatchEvent }
  /** The main agent's token totals after a `usage_stats` event. */
  | { readonly kind: 'usage'; readonly usage: UsageTotals }
  /** The run asked for an approval or an answer. */
  | { readonly kind: 'gate'; readonly event: InterruptEvent | AskUserEvent }
  | { readonly kind: 'error'; readonly event: ErrorEvent }
  | { readonly kind: 'done'; readonly event: DoneEvent };

/** The last change `runChanges()` emits: the run's summary, as `summarize()` gives it. */
export interface SummaryChange {
  /** Always `summary`: the last change of a run. */
  readonly kind: 'summary';
  /** The run's summary. */
  readonly summary: RunSummary;
}

/** Hears a `RunModel`'s changes, as they are made. */
export type RunListener = (change: RunChange) => void;

/** How a listener hears a `RunModel`. */
export interface ListenOptions {
  /** Also the changes most events make: `text`, `thinking` and `delegation-event`. Default `false`. */
  readonly deltas?: boolean;
}
