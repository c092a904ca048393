import { connect, count, filter, map, merge, mergeMap, of, share, type OperatorFunction } from 'rxjs';
import type { ErrorEvent, EvoEvent, UnknownEvent } from '../src/events.js';
import { accumulateText } from '../operators/accumulateText.js';
import { groupSubagents, type SubagentRun } from '../operators/groupSubagents.js';
import { ofType } from '../operators/ofType.js';
import { pairToolCalls, type ToolInvocation } from '../operators/pairToolCalls.js';
import { summarize, type RunSummary } from '../operators/summarize.js';
import { sumUsage, type UsageTotals } from '../operators/sumUsage.js';

// The live view's model: the actions derived from a run's events, the state
// they build, and the reducer between them.

/** One change to the live view, derived from the run's events by `viewActions`. */
export type ViewAction =
  | { readonly kind: 'thinking'; readonly content: string }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'tool'; readonly invocation: ToolInvocation; readonly delegation?: SubagentRun }
  | { readonly kind: 'subagent-start'; readonly delegation: SubagentRun }
  | { readonly kind: 'subagent-end'; readonly delegation: SubagentRun; readonly events: number }
  | { readonly kind: 'usage'; readonly usage: UsageTotals }
  | { readonly kind: 'error'; readonly event: ErrorEvent }
  | { readonly kind: 'summary'; readonly summary: RunSummary };

/** A delegation as the view shows it. */
export interface ViewDelegation {
  readonly run: SubagentRun;
  readonly tools: ReadonlyMap<string, ToolInvocation>;
  readonly events: number | undefined;
}

/** Everything the live view draws. */
export interface ViewState {
  readonly thinking: string;
  readonly text: string;
  /** Main-agent tools by key, `task` delegations left to the sub-agent tree. */
  readonly tools: ReadonlyMap<string, ToolInvocation>;
  readonly delegations: readonly ViewDelegation[];
  readonly usage: UsageTotals;
  readonly errors: readonly string[];
  readonly summary: RunSummary | undefined;
}

/** The view before the first event. */
export const initialView: ViewState = {
  thinking: '',
  text: '',
  tools: new Map(),
  delegations: [],
  usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  errors: [],
  summary: undefined,
};

function updateDelegation(
  state: ViewState,
  run: ViewDelegation['run'],
  change: (d: ViewDelegation) => ViewDelegation,
): ViewState {
  return { ...state, delegations: state.delegations.map((d) => (d.run === run ? change(d) : d)) };
}

/** Applies one action to the view state; a new state, the old one untouched. */
export function reduceView(state: ViewState, action: ViewAction): ViewState {
  switch (action.kind) {
    case 'thinking':
      return { ...state, thinking: action.content };
    case 'text':
      return { ...state, text: action.text };
    case 'tool': {
      const { invocation, delegation } = action;
      if (delegation) {
        return updateDelegation(state, delegation, (d) => ({
          ...d,
          tools: new Map(d.tools).set(invocation.key, invocation),
        }));
      }
      return { ...state, tools: new Map(state.tools).set(invocation.key, invocation) };
    }
    case 'subagent-start':
      return {
        ...state,
        delegations: [...state.delegations, { run: action.delegation, tools: new Map(), events: undefined }],
      };
    case 'subagent-end':
      return updateDelegation(state, action.delegation, (d) => ({ ...d, events: action.events }));
    case 'usage':
      return { ...state, usage: action.usage };
    case 'error':
      return { ...state, errors: [...state.errors, action.event.message] };
    case 'summary':
      return { ...state, summary: action.summary };
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
        ofType('tool_call', 'tool_result'),
        // A `task` call is a delegation: the sub-agent tree shows it.
        filter((e) => e.name !== 'task'),
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
