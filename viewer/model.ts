import { connect, count, filter, map, merge, mergeMap, of, share, type OperatorFunction } from 'rxjs';
import type {
  ErrorEvent,
  EvoEvent,
  PanelDispatchCompleteEvent,
  PanelDispatchErrorEvent,
  PanelDispatchStartEvent,
  UnknownEvent,
} from '../src/events.js';
import { accumulateText } from '../operators/accumulateText.js';
import { groupSubagents, type SubagentRun } from '../operators/groupSubagents.js';
import { ofType } from '../operators/ofType.js';
import { pairToolCalls, type ToolInvocation } from '../operators/pairToolCalls.js';
import { summarize, type RunSummary } from '../operators/summarize.js';
import { sumUsage, type UsageTotals } from '../operators/sumUsage.js';

// The live view's model: the actions derived from a run's events, and the
// state they build.

/** One change to the live view, derived from the run's events by `viewActions`. */
export type ViewAction =
  | { readonly kind: 'thinking'; readonly content: string }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'tool'; readonly invocation: ToolInvocation; readonly delegation?: SubagentRun }
  | { readonly kind: 'subagent-start'; readonly delegation: SubagentRun }
  | { readonly kind: 'subagent-end'; readonly delegation: SubagentRun; readonly events: number }
  | { readonly kind: 'panel'; readonly event: PanelDispatchEvent }
  | { readonly kind: 'usage'; readonly usage: UsageTotals }
  | { readonly kind: 'error'; readonly event: ErrorEvent }
  | { readonly kind: 'summary'; readonly summary: RunSummary };

type PanelDispatchEvent = PanelDispatchStartEvent | PanelDispatchCompleteEvent | PanelDispatchErrorEvent;

/** Invocations by key in the order first seen, with the latest snapshot of each: updated in place. */
export class ToolList {
  private readonly index = new Map<string, number>();
  private readonly list: ToolInvocation[] = [];

  set(invocation: ToolInvocation): void {
    const at = this.index.get(invocation.key);
    if (at === undefined) {
      this.index.set(invocation.key, this.list.length);
      this.list.push(invocation);
    } else this.list[at] = invocation;
  }

  get size(): number {
    return this.list.length;
  }

  /** The last `n`, oldest first: a frame draws only what fits. */
  last(n: number): readonly ToolInvocation[] {
    return this.list.slice(Math.max(0, this.list.length - n));
  }

  all(): readonly ToolInvocation[] {
    return this.list;
  }
}

/** A delegation as the view shows it. */
export interface ViewDelegation {
  readonly run: SubagentRun;
  readonly tools: ToolList;
  /** Its event count once it has ended; `undefined` while it runs. */
  events: number | undefined;
}

/** A panel dispatch as the view shows it. */
export interface ViewPanel {
  readonly id: string;
  label: string;
  subagentType: string;
  status: 'running' | 'completed' | 'failed';
  durationMs: number | undefined;
  error: string | undefined;
}

/**
 * Everything the live view draws, changed in place by `apply`: the work per
 * event does not grow with the run, however many tools it calls.
 */
export class ViewModel {
  thinking = '';
  text = '';
  /** Main-agent tools, `task` delegations left to the sub-agent tree. */
  readonly tools = new ToolList();
  readonly delegations: ViewDelegation[] = [];
  private readonly byRun = new Map<SubagentRun, ViewDelegation>();
  readonly panels = new Map<string, ViewPanel>();
  usage: UsageTotals = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  readonly errors: string[] = [];
  summary: RunSummary | undefined;

  apply(action: ViewAction): this {
    switch (action.kind) {
      case 'thinking':
        this.thinking = action.content;
        break;
      case 'text':
        this.text = action.text;
        break;
      case 'tool':
        (action.delegation ? this.byRun.get(action.delegation)?.tools : this.tools)?.set(action.invocation);
        break;
      case 'subagent-start': {
        const delegation: ViewDelegation = { run: action.delegation, tools: new ToolList(), events: undefined };
        this.delegations.push(delegation);
        this.byRun.set(action.delegation, delegation);
        break;
      }
      case 'subagent-end': {
        const delegation = this.byRun.get(action.delegation);
        if (delegation) delegation.events = action.events;
        break;
      }
      case 'panel':
        this.panel(action.event);
        break;
      case 'usage':
        this.usage = action.usage;
        break;
      case 'error':
        this.errors.push(action.event.message);
        break;
      case 'summary':
        this.summary = action.summary;
        break;
    }
    return this;
  }

  private panel(event: PanelDispatchEvent): void {
    let panel = this.panels.get(event.id);
    if (!panel) {
      panel = { id: event.id, label: '', subagentType: '', status: 'running', durationMs: undefined, error: undefined };
      this.panels.set(event.id, panel);
    }
    if (event.type === 'panel_dispatch_start') {
      panel.label = event.label;
      panel.subagentType = event.subagent_type;
    } else {
      panel.durationMs = event.duration_ms;
      panel.status = event.type === 'panel_dispatch_complete' ? 'completed' : 'failed';
      if (event.type === 'panel_dispatch_error') panel.error = event.error;
    }
  }
}

/**
 * The changes a live view shows, from one subscription to the run: the
 * library's operators side by side over the shared event stream. Main-agent
 * `task` calls are left out of the tools: they are the delegations. Sub-agent
 * tools are paired inside each delegation's own `events$`, so two parallel
 * sub-agents of the same name keep their tools apart.
 */
export function viewActions(): OperatorFunction<EvoEvent | UnknownEvent, ViewAction> {
  return connect((events$) =>
    merge(
      events$.pipe(
        ofType('thinking'),
        map((e): ViewAction => ({ kind: 'thinking', content: e.content })),
      ),
      events$.pipe(
        accumulateText(),
        map((text): ViewAction => ({ kind: 'text', text })),
      ),
      events$.pipe(
        // The questions and approvals too: a call the run stopped to ask about ends as awaiting input.
        ofType('tool_call', 'tool_result', 'ask_user', 'interrupt'),
        // A `task` call is a delegation: the sub-agent tree shows it.
        filter((e) => !('name' in e) || e.name !== 'task'),
        pairToolCalls(),
        map((invocation): ViewAction => ({ kind: 'tool', invocation })),
      ),
      events$.pipe(
        groupSubagents(),
        mergeMap((delegation) => {
          const own$ = delegation.events$.pipe(share());
          return merge(
            of<ViewAction>({ kind: 'subagent-start', delegation }),
            own$.pipe(
              pairToolCalls(),
              map((invocation): ViewAction => ({ kind: 'tool', invocation, delegation })),
            ),
            own$.pipe(
              count(),
              map((events): ViewAction => ({ kind: 'subagent-end', delegation, events })),
            ),
          );
        }),
      ),
      events$.pipe(
        ofType('panel_dispatch_start', 'panel_dispatch_complete', 'panel_dispatch_error'),
        map((event): ViewAction => ({ kind: 'panel', event })),
      ),
      events$.pipe(
        sumUsage(),
        map((usage): ViewAction => ({ kind: 'usage', usage })),
      ),
      events$.pipe(
        ofType('error'),
        map((event): ViewAction => ({ kind: 'error', event })),
      ),
      events$.pipe(
        summarize(),
        map((summary): ViewAction => ({ kind: 'summary', summary })),
      ),
    ),
  );
}
