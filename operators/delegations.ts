// The state of the delegations `DelegationTracker` follows, shared by its two ways of routing events.
import type { SubagentTextEvent, SubagentToolCallEvent, SubagentToolResultEvent } from '../src/events/codecs.js';

/** An event made inside a sub-agent: what a delegation's `events$` carries. */
export type SubagentEvent = SubagentToolCallEvent | SubagentToolResultEvent | SubagentTextEvent;

/** The state of one delegation, as `DelegationTracker` keeps it. */
export interface Delegation {
  /** Its `instance_id`; else the id of the `task` call that started it; else `subagent#n`. */
  readonly key: string;
  /** The producer's id of this delegation (0.2.x); `undefined` in streams without one. */
  readonly instanceId: string | undefined;
  /** The latest name: a second `subagent_start` replaces a placeholder. */
  name: string;
  /** The `subagent_type` of its `task` call. */
  subagentType: string | undefined;
  /** The `description` of its `subagent_start`, else (0.2.x sends `""` there) of its `task` call. */
  description: string;
  /** The `task` call's id, when one was seen. */
  readonly taskCallId: string | undefined;
  /** Events routed to it so far. */
  events: number;
  /** Its `task` result has arrived: the next `subagent_end` of its name is its own. */
  ending: boolean;
  open: boolean;
  /** Its `subagent_end` arrived (rather than the stream ending first). */
  ended: boolean;
}

/**
 * A delegation to a sub-agent as the run model follows it: one object for
 * its whole life, whose fields change as the stream tells more (a name that
 * replaces the placeholder, the `task` call's type, its end). Read it when a
 * change names it; keep it as a key, not as a record of that moment.
 */
export type RunDelegation = Readonly<Omit<Delegation, 'ending'>>;

/** What `DelegationTracker` reports. */
export interface DelegationSink {
  start(delegation: Delegation): void;
  event(delegation: Delegation, event: SubagentEvent): void;
  end(delegation: Delegation): void;
}

/** The name the producer gives a sub-agent before it knows the real one. */
export const PLACEHOLDER = 'sub-agent';

/** A `task` tool call: what starts a delegation. */
export interface TaskCall {
  readonly id: string;
  subagentType: string | undefined;
  description: string | undefined;
}

/** One delegation and what routing its events needs. */
export interface DelegationState {
  readonly delegation: Delegation;
  readonly task: TaskCall | undefined;
  /** Sub-agent tool calls still open, by name: where an id-less result goes. */
  readonly openCalls: Map<string, number>;
  readonly instanceIds: Set<string | number>;
  /** Start order, across both kinds. */
  readonly order: number;
}
