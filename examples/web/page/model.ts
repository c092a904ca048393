// What the dashboard shows of a run, derived from its events by the library's
// operators, and the accessors that read a `RunSummary`. No DOM: the same
// module runs in the page and in Node.
import { connect, count, filter, map, merge, mergeMap, of, share, type OperatorFunction } from 'rxjs';
import type { AskUserEvent, EvoEvent, InterruptEvent, UnknownEvent } from 'evosci-rx/events';
import {
  accumulateText,
  groupSubagents,
  ofType,
  pairToolCalls,
  summarize,
  sumUsage,
  type RunSummary,
  type SubagentRun,
  type ToolInvocation,
  type UsageTotals,
} from 'evosci-rx/operators';

/** One change to a run's card. */
export type DashboardAction =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'tool'; readonly invocation: ToolInvocation; readonly delegation?: SubagentRun }
  | { readonly kind: 'subagent-start'; readonly delegation: SubagentRun }
  | { readonly kind: 'subagent-end'; readonly delegation: SubagentRun; readonly events: number }
  | { readonly kind: 'usage'; readonly usage: UsageTotals }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'summary'; readonly summary: RunSummary };

/**
 * The card's changes, from one subscription to the run's events shared by
 * the operators side by side (`connect`). Main-agent `task` calls are the
 * delegations, so the tool list leaves them to the sub-agent tree; each
 * delegation's own tools are paired inside its `events$`, which keeps two
 * parallel sub-agents of the same name apart.
 */
export function dashboardActions(): OperatorFunction<EvoEvent | UnknownEvent, DashboardAction> {
  return connect((events$) =>
    merge(
      events$.pipe(
        accumulateText(),
        map((text): DashboardAction => ({ kind: 'text', text })),
      ),
      events$.pipe(
        // The questions and approvals too: a call the run stopped to ask about ends as awaiting input.
        ofType('tool_call', 'tool_result', 'ask_user', 'interrupt'),
        filter((e) => !('name' in e) || e.name !== 'task'),
        pairToolCalls(),
        map((invocation): DashboardAction => ({ kind: 'tool', invocation })),
      ),
      events$.pipe(
        groupSubagents(),
        mergeMap((delegation) => {
          const own$ = delegation.events$.pipe(share());
          return merge(
            of<DashboardAction>({ kind: 'subagent-start', delegation }),
            own$.pipe(
              pairToolCalls(),
              map((invocation): DashboardAction => ({ kind: 'tool', invocation, delegation })),
            ),
            own$.pipe(
              count(),
              map((events): DashboardAction => ({ kind: 'subagent-end', delegation, events })),
            ),
          );
        }),
      ),
      events$.pipe(
        sumUsage(),
        map((usage): DashboardAction => ({ kind: 'usage', usage })),
      ),
      events$.pipe(
        ofType('error'),
        map((e): DashboardAction => ({ kind: 'error', message: e.message })),
      ),
      events$.pipe(
        summarize(),
        map((summary): DashboardAction => ({ kind: 'summary', summary })),
      ),
    ),
  );
}

// --- reading a RunSummary --------------------------------------------------------

/** `'completed' | 'needs-input' | 'failed' | 'incomplete'`. */
export type Outcome = RunSummary['outcome'];

export function outcomeOf(summary: RunSummary): Outcome {
  return summary.outcome;
}

/** What the run is waiting for a person to answer. */
export interface Pending {
  readonly questions: readonly AskUserEvent[];
  readonly approvals: readonly InterruptEvent[];
}

export function pendingOf(summary: RunSummary): Pending {
  return { questions: summary.pendingQuestions, approvals: summary.pendingApprovals };
}

/** A delegation's identity: its sub-agent instance where the stream has one, else its `task` call's key. */
export function delegationId(delegation: SubagentRun): string {
  return delegation.instanceId ?? delegation.key;
}

export type ToolStatus = ToolInvocation['status'];
export const TOOL_STATUSES: readonly ToolStatus[] = ['succeeded', 'failed', 'awaiting-input', 'unfinished', 'running'];

/** The summary's tool calls (delegations aside) by status. */
export function toolCounts(summary: RunSummary): Record<ToolStatus, number> {
  const counts: Record<ToolStatus, number> = {
    succeeded: 0,
    failed: 0,
    'awaiting-input': 0,
    unfinished: 0,
    running: 0,
  };
  for (const invocation of summary.invocations) if (invocation.name !== 'task') counts[invocation.status]++;
  return counts;
}

/** A question's text and choices, read leniently: the protocol leaves their shape open. */
export function describeQuestion(question: unknown): { readonly text: string; readonly choices: readonly string[] } {
  if (typeof question !== 'object' || question === null) return { text: String(question), choices: [] };
  const { question: text, choices } = question as { question?: unknown; choices?: unknown };
  const values = Array.isArray(choices)
    ? choices.map((c) => (typeof c === 'object' && c !== null && 'value' in c ? String(c.value) : String(c)))
    : [];
  return { text: typeof text === 'string' ? text : JSON.stringify(question), choices: values };
}

/** An approval request's tool and arguments, read leniently. */
export function describeApproval(request: unknown): string {
  if (typeof request !== 'object' || request === null) return String(request);
  const { name, args } = request as { name?: unknown; args?: unknown };
  return typeof name === 'string'
    ? `${name} ${args === undefined ? '' : JSON.stringify(args)}`.trim()
    : JSON.stringify(request);
}
