import type { SubagentToolCallEvent } from '../src/events/SubagentToolCallEvent.js';
import type { SubagentToolResultEvent } from '../src/events/SubagentToolResultEvent.js';
import type { ToolCallEvent } from '../src/events/ToolCallEvent.js';
import type { ToolResultEvent } from '../src/events/ToolResultEvent.js';

/**
 * One tool invocation as `pairToolCalls` sees it at one moment. Each snapshot
 * is a new object; a later snapshot with the same `key` supersedes it.
 */
export interface ToolInvocation {
  /** Unique per invocation within a run: the wire id (prefixed by the sub-agent for its calls), or `#n` for a call without one. */
  readonly key: string;
  /** The id as on the wire; `''` when the producer sent none. */
  readonly id: string;
  readonly name: string;
  /** The latest arguments: the complete ones once the producer has re-sent the call. */
  readonly args: Readonly<Record<string, unknown>>;
  /** The sub-agent that made the call; absent for the main agent's calls. */
  readonly subagent?: string;
  /** `unfinished`: the stream ended before its result. */
  readonly status: 'running' | 'succeeded' | 'failed' | 'unfinished';
  /** The result's content, once it has arrived. */
  readonly result?: string;
  readonly success?: boolean;
  /** The latest call event; absent only for a result whose call was never seen. */
  readonly callEvent?: ToolCallEvent | SubagentToolCallEvent;
  readonly resultEvent?: ToolResultEvent | SubagentToolResultEvent;
  /** Scheduler time of the first call event, and of the result or the end of the stream. */
  readonly startedAt: number;
  readonly endedAt?: number;
}
