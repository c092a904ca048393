/**
 * The `evosci-rx/operators` entry: pure RxJS operators. No Node built-ins: safe in a browser.
 *
 * @module evosci-rx/operators
 */
export { accumulateText } from './accumulateText.js';
export { groupSubagents, type SubagentEvent, type SubagentRun } from './groupSubagents.js';
export { ofType } from './ofType.js';
export { pairToolCalls, type ToolInvocation } from './pairToolCalls.js';
export { RunModel } from './RunModel.js';
export type { ListenOptions, RunChange, RunDelegation, RunListener, SummaryChange } from './runChange.js';
export { runChanges } from './runChanges.js';
export { summarize } from './summarize.js';
export type {
  DelegationSummary,
  InvocationSummary,
  PanelDispatchSummary,
  RunOutcome,
  RunSummary,
} from './summaryTypes.js';
export { sumUsage, type UsageTotals } from './sumUsage.js';
export { briefArgs, countToolCalls, isToolCall, jsonPreview, type ToolCallCounts } from './toolCalls.js';
export { viewActions, type PanelDispatchEvent, type ViewAction } from './viewActions.js';
export { watchRun, type RunWatcher, type WatchRun } from './watchRun.js';
export { plainViewAction, type PlainSubagentRun, type PlainViewAction } from './plainViewAction.js';
