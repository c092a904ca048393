import type { SubagentRun } from '../operators/SubagentRun.js';
import type { ToolInvocation } from '../operators/ToolInvocation.js';

/** A delegation as the view shows it. */
export interface ViewDelegation {
  readonly run: SubagentRun;
  readonly tools: ReadonlyMap<string, ToolInvocation>;
  readonly events: number | undefined;
}
