import type { ErrorEvent } from '../src/events/ErrorEvent.js';
import type { RunSummary } from '../operators/RunSummary.js';
import type { SubagentRun } from '../operators/SubagentRun.js';
import type { ToolInvocation } from '../operators/ToolInvocation.js';
import type { UsageTotals } from '../operators/UsageTotals.js';

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
