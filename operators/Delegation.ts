/** The state of one delegation, as `DelegationTracker` keeps it. */
export interface Delegation {
  /** The id of the `task` tool call that started it, or `subagent#n` when none was seen. */
  readonly key: string;
  /** The latest name: a second `subagent_start` replaces a placeholder. */
  name: string;
  description: string;
  /** The `task` call's id, when one was seen. */
  readonly taskCallId: string | undefined;
  /** Events routed to it so far. */
  events: number;
  /** Its `task` result has arrived: the next `subagent_end` of its name is its own. */
  ending: boolean;
  open: boolean;
}
