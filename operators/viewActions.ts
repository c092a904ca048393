import {
  connect,
  count,
  endWith,
  filter,
  ignoreElements,
  map,
  merge,
  mergeMap,
  of,
  share,
  takeUntil,
  type Observable,
  type OperatorFunction,
} from 'rxjs';
import type {
  ErrorEvent,
  EvoEvent,
  InterruptEvent,
  PanelDispatchCompleteEvent,
  PanelDispatchErrorEvent,
  PanelDispatchStartEvent,
  UnknownEvent,
} from '../src/events.js';
import { accumulateText } from './accumulateText.js';
import { groupSubagents, type SubagentRun } from './groupSubagents.js';
import { ofType } from './ofType.js';
import { pairToolCalls, type ToolInvocation } from './pairToolCalls.js';
import { summarize } from './summarize.js';
import type { RunSummary } from './summaryTypes.js';
import { sumUsage, type UsageTotals } from './sumUsage.js';
import { isToolCall } from './toolCalls.js';

/** A `panel_dispatch_*` event. */
export type PanelDispatchEvent = PanelDispatchStartEvent | PanelDispatchCompleteEvent | PanelDispatchErrorEvent;

/** One change to a live view of a run, derived from its events by `viewActions`. */
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

/** Main-agent tools; `task` calls are left to the sub-agent tree. */
function mainTools(events$: Observable<EvoEvent | UnknownEvent>): Observable<ViewAction> {
  return events$.pipe(
    // The questions and approvals too: a call the run stopped to ask about ends as awaiting input.
    ofType('tool_call', 'tool_result', 'ask_user', 'interrupt'),
    filter((e) => !('name' in e) || isToolCall(e)),
    pairToolCalls(),
    map((invocation): ViewAction => ({ kind: 'tool', invocation })),
  );
}

/**
 * One delegation: its start, its tools paired inside its own `events$` (so
 * that two parallel same-name sub-agents keep theirs apart), its end. The
 * run's approvals are paired in while it runs: an `interrupt` raised inside a
 * sub-agent names no instance, and its action requests tie it to the call.
 */
function delegationActions(delegation: SubagentRun, interrupts$: Observable<InterruptEvent>): Observable<ViewAction> {
  const own$ = delegation.events$.pipe(share());
  const over$ = own$.pipe(ignoreElements(), endWith(true));
  const asked$: Observable<EvoEvent> = merge(own$, interrupts$.pipe(takeUntil(over$)));
  return merge(
    of<ViewAction>({ kind: 'subagent-start', delegation }),
    asked$.pipe(
      pairToolCalls(),
      map((invocation): ViewAction => ({ kind: 'tool', invocation, delegation })),
    ),
    own$.pipe(
      count(),
      map((events): ViewAction => ({ kind: 'subagent-end', delegation, events })),
    ),
  );
}

/**
 * The changes a live view shows, from one subscription to the run: the
 * library's operators side by side over the shared event stream (`connect`).
 * Main-agent `task` calls are left out of the tools: they are the
 * delegations, each with its own tools. Apply them to a state of your own (the
 * terminal viewer's `ViewModel`, a web page's DOM). An action's `delegation`
 * is live (its `events$`, fields that follow the run); for a store that takes
 * only plain data (Redux, NgRx), `map(plainViewAction)` after it.
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
  return connect((events$) => {
    const interrupts$ = events$.pipe(ofType('interrupt'));
    return merge(
      events$.pipe(
        ofType('thinking'),
        map((e): ViewAction => ({ kind: 'thinking', content: e.content })),
      ),
      events$.pipe(
        accumulateText(),
        map((text): ViewAction => ({ kind: 'text', text })),
      ),
      mainTools(events$),
      events$.pipe(
        groupSubagents(),
        mergeMap((delegation) => delegationActions(delegation, interrupts$)),
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
    );
  });
}
