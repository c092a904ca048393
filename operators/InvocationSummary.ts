import type { ToolInvocation } from './ToolInvocation.js';

/**
 * One tool invocation in a `RunSummary`: its final state without the events
 * and the output, so a summary stays small however much the tools returned.
 */
export interface InvocationSummary {
  readonly key: string;
  readonly id: string;
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly subagent?: string;
  readonly status: ToolInvocation['status'];
  /** The result's content of a failed invocation: what went wrong. */
  readonly error?: string;
  readonly startedAt: number;
  readonly endedAt?: number;
}
