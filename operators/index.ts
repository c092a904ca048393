// The `evosci-rx/operators` entry: pure RxJS operators. No Node built-ins.
export { accumulateText } from './accumulateText.js';
export type { DelegationSummary } from './DelegationSummary.js';
export { groupSubagents } from './groupSubagents.js';
export type { InvocationSummary } from './InvocationSummary.js';
export { ofType } from './ofType.js';
export { pairToolCalls } from './pairToolCalls.js';
export type { RunSummary } from './RunSummary.js';
export type { SubagentEvent } from './SubagentEvent.js';
export type { SubagentRun } from './SubagentRun.js';
export { sumUsage } from './sumUsage.js';
export { summarize } from './summarize.js';
export type { ToolInvocation } from './ToolInvocation.js';
export type { UsageTotals } from './UsageTotals.js';
