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
  | {
      /** Discriminant of this change. */
      readonly kind: 'text';
      /** This delta only; join them for the message. */
      readonly delta: string;
    }
  /** A thinking block of the main agent. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'thinking';
      /** The reasoning text. */
      readonly content: string;
    }
  /**
   * A new snapshot of an invocation. `event` made it: none when the end of
   * its sub-agent, or of the run, closed it. `delegation`: the sub-agent it ran in.
   */
  | {
      /** Discriminant of this change. */
      readonly kind: 'invocation';
      /** The invocation's state now. */
      readonly invocation: ToolInvocation;
      /** The event that made it; `undefined` when an end closed it. */
      readonly event: ToolCallEvent | ToolResultEvent | SubagentToolCallEvent | SubagentToolResultEvent | undefined;
      /** The delegation it ran in; `undefined` for the main agent's. */
      readonly delegation: RunDelegation | undefined;
    }
  /** A sub-agent delegation began. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'delegation-start';
      /** The delegation, whose fields follow the run. */
      readonly delegation: RunDelegation;
    }
  /** An event made inside a delegation, routed to it. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'delegation-event';
      /** The delegation it was routed to. */
      readonly delegation: RunDelegation;
      /** The sub-agent's event. */
      readonly event: SubagentEvent;
    }
  /** Its `subagent_end` came (`delegation.ended`), or the run ended first. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'delegation-end';
      /** The delegation that ended. */
      readonly delegation: RunDelegation;
    }
  /** A panel dispatch started or ended: `panel` is its state now, `event` what changed it. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'panel';
      /** The dispatch's state now. */
      readonly panel: PanelDispatchSummary;
      /** The event that changed it. */
      readonly event: PanelDispatchEvent;
    }
  /** The main agent's token totals after a `usage_stats` event. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'usage';
      /** The totals so far. */
      readonly usage: UsageTotals;
    }
  /** The run asked for an approval or an answer. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'gate';
      /** The request, which the run stops after. */
      readonly event: InterruptEvent | AskUserEvent;
    }
  /** The producer reported an error. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'error';
      /** The `error` event. */
      readonly event: ErrorEvent;
    }
  /** The stream ended with `done`. */
  | {
      /** Discriminant of this change. */
      readonly kind: 'done';
      /** The `done` event. */
      readonly event: DoneEvent;
    };

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
