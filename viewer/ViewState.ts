import type { RunSummary } from '../operators/RunSummary.js';
import type { ToolInvocation } from '../operators/ToolInvocation.js';
import type { UsageTotals } from '../operators/UsageTotals.js';
import type { ViewDelegation } from './ViewDelegation.js';

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
