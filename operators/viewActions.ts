import { connect, defer, EMPTY, filter, map, mergeMap, takeWhile, type Observable, type OperatorFunction } from 'rxjs';
import type { ErrorEvent, EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import type { SubagentEvent } from './delegations.js';
import type { PanelDispatchEvent, RunChange, RunDelegation, SummaryChange } from './runChange.js';
import { runChanges } from './runChanges.js';
import { subagentRun, type SubagentRun } from './subagentRun.js';
import type { PanelDispatchSummary, RunSummary } from './summaryTypes.js';
import type { UsageTotals } from './sumUsage.js';
import type { ToolInvocation } from './ToolCallTracker.js';
import { isToolCall } from './toolCalls.js';
import { textAtDone } from './accumulateText.js';

export type { PanelDispatchEvent } from './runChange.js';

/** One change to a live view of a run, derived from its events by `viewActions`. */
export type ViewAction =
  /** A thinking block of the main agent. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'thinking';
      /** The reasoning text. */
      readonly content: string;
    }
  /** The main agent's text changed. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'text';
      /** All of it so far, not a delta: show it in place of the last. */
      readonly text: string;
    }
  /** A tool invocation's new state; main-agent `task` calls are left out. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'tool';
      /** The invocation's state now. */
      readonly invocation: ToolInvocation;
      /** The delegation it ran in; absent for the main agent's. */
      readonly delegation?: SubagentRun;
    }
  /** A sub-agent delegation began. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'subagent-start';
      /** The delegation, live: its `events$` and fields follow the run. */
      readonly delegation: SubagentRun;
    }
  /** A sub-agent delegation ended. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'subagent-end';
      /** The delegation that ended. */
      readonly delegation: SubagentRun;
      /** How many events it had. */
      readonly events: number;
    }
  /** `panel`: the dispatch's state after `event`. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'panel';
      /** The event that changed it. */
      readonly event: PanelDispatchEvent;
      /** The dispatch's state now. */
      readonly panel: PanelDispatchSummary;
    }
  /** The main agent's token totals changed; at the end of a run without any, zero. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'usage';
      /** The totals so far. */
      readonly usage: UsageTotals;
    }
  /** The producer reported an error. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'error';
      /** The `error` event. */
      readonly event: ErrorEvent;
    }
  /** The run ended: the last action. */
  | {
      /** Discriminant of this action. */
      readonly kind: 'summary';
      /** The run's summary, as `summarize()` gives it. */
      readonly summary: RunSummary;
    };

const NONE: readonly ViewAction[] = [];

/**
 * What a view shows of each change of the run model: the main agent's text
 * so far, its tools but `task` (the delegations are shown instead, each with
 * its tools), the delegations as `SubagentRun`s, usage (zero at the end of a
 * run without any), panel dispatches, errors, the summary.
 */
class ViewActionMapper {
  private text = '';
  private usageSeen = false;
  /** The `SubagentRun` of each delegation, for as long as its model keeps it. */
  private readonly runs = new WeakMap<RunDelegation, SubagentRun>();

  constructor(private readonly eventsOf: (delegation: RunDelegation) => Observable<SubagentEvent>) {}

  actionsOf(change: RunChange | SummaryChange): readonly ViewAction[] {
    switch (change.kind) {
      case 'thinking':
        return [{ kind: 'thinking', content: change.content }];
      case 'text':
        this.text += change.delta;
        return [{ kind: 'text', text: this.text }];
      case 'done': {
        const text = textAtDone(this.text, change.event.response);
        if (text === this.text) return NONE;
        this.text = text;
        return [{ kind: 'text', text }];
      }
      case 'invocation':
        return this.tool(change.invocation, change.delegation);
      case 'delegation-start':
        return this.started(change.delegation);
      case 'delegation-end':
        return this.ended(change.delegation);
      case 'panel':
        return [{ kind: 'panel', event: change.event, panel: change.panel }];
      case 'usage':
        this.usageSeen = true;
        return [{ kind: 'usage', usage: change.usage }];
      case 'error':
        return [{ kind: 'error', event: change.event }];
      case 'summary': {
        const { summary } = change;
        // A run without usage reports its zero totals, as `sumUsage` does.
        if (this.usageSeen) return [{ kind: 'summary', summary }];
        return [
          { kind: 'usage', usage: summary.usage },
          { kind: 'summary', summary },
        ];
      }
      default:
        return NONE;
    }
  }

  private tool(invocation: ToolInvocation, delegation: RunDelegation | undefined): readonly ViewAction[] {
    if (invocation.subagent === undefined) return isToolCall(invocation) ? [{ kind: 'tool', invocation }] : NONE;
    const run = delegation === undefined ? undefined : this.runs.get(delegation);
    return [run === undefined ? { kind: 'tool', invocation } : { kind: 'tool', invocation, delegation: run }];
  }

  private started(delegation: RunDelegation): readonly ViewAction[] {
    const run = subagentRun(delegation, this.eventsOf(delegation));
    this.runs.set(delegation, run);
    return [{ kind: 'subagent-start', delegation: run }];
  }

  private ended(delegation: RunDelegation): readonly ViewAction[] {
    const run = this.runs.get(delegation);
    return run === undefined ? NONE : [{ kind: 'subagent-end', delegation: run, events: delegation.events }];
  }
}

/**
 * A delegation's events among the run's changes, up to its end: hot, like a
 * `groupBy` group (subscribed after its end, it completes at once).
 */
function eventsOf(
  changes$: Observable<RunChange | SummaryChange>,
  delegation: RunDelegation,
): Observable<SubagentEvent> {
  return defer(() =>
    delegation.open
      ? changes$.pipe(
          takeWhile((c) => c.kind !== 'delegation-end' || c.delegation !== delegation),
          filter((c) => c.kind === 'delegation-event' && c.delegation === delegation),
          map((c) => (c as Extract<RunChange, { kind: 'delegation-event' }>).event),
        )
      : EMPTY,
  );
}

/**
 * The changes a live view shows, from one subscription to the run: the run
 * model's changes (`runChanges()`), mapped. Main-agent `task` calls are left
 * out of the tools: they are the delegations, each with its own tools. Apply
 * them to a state of your own (the terminal viewer's `ViewModel`, a web
 * page's DOM). An action's `delegation` is live (its `events$`, fields that
 * follow the run); for a store that takes only plain data (Redux, NgRx),
 * `map(plainViewAction)` after it.
 *
 * ```ts
 * run$.pipe(viewActions()).subscribe((action) => card.apply(action));
 * ```
 *
 * ```
 * source:        --s----c-----r----x---u---d--|   s: subagent_start, c/r: its call and result, x: its end
 * viewActions(): --S----T-----T----E---U---X--(Z|) S: subagent-start, T: tool, E: subagent-end,
 *                                                  U: usage, X: text, Z: summary
 * ```
 */
export function viewActions(): OperatorFunction<EvoEvent | UnknownEvent, ViewAction> {
  return (source) =>
    source.pipe(
      runChanges(),
      connect((changes$) => {
        const mapper = new ViewActionMapper((delegation) => eventsOf(changes$, delegation));
        return changes$.pipe(mergeMap((change) => mapper.actionsOf(change)));
      }),
    );
}
