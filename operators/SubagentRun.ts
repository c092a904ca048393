import type { Observable } from 'rxjs';
import type { SubagentEvent } from './SubagentEvent.js';

/** One delegation to a sub-agent, as `groupSubagents` emits it. */
export interface SubagentRun {
  /** The id of the `task` call that started it, or `subagent#n` when none was seen. */
  readonly key: string;
  /** The latest name: it changes when the producer replaces the `sub-agent` placeholder. */
  readonly name: string;
  readonly description: string;
  readonly taskCallId: string | undefined;
  /** Its `subagent_*` events; completes at its `subagent_end`, or when the source ends. Hot, like `groupBy`'s groups. */
  readonly events$: Observable<SubagentEvent>;
}
