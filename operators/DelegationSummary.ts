/** One delegation in a `RunSummary`. */
export interface DelegationSummary {
  readonly key: string;
  readonly name: string;
  readonly description: string;
  readonly taskCallId: string | undefined;
  /** Its `subagent_*` events. */
  readonly events: number;
  /** Whether its `subagent_end` arrived before the stream ended. */
  readonly ended: boolean;
}
