import type { Observable } from 'rxjs';
import type { RunDelegation, SubagentEvent } from './delegations.js';

/** One delegation to a sub-agent, as `groupSubagents` emits it. */
export interface SubagentRun {
  /** Its `instance_id`; in streams without one, the id of the `task` call that started it, else `subagent#n`. */
  readonly key: string;
  /** The producer's id of this delegation (0.2.x); absent in streams without one. */
  readonly instanceId?: string;
  /** The latest name: it changes when an older producer replaces the `sub-agent` placeholder. */
  readonly name: string;
  /**
   * The `subagent_type` its `task` call asked for; absent when the stream had
   * not shown that call when the delegation started (a `task` call sent again
   * later fills it in, readable but not enumerable).
   */
  readonly subagentType?: string;
  /** What it was asked to do: its `task` call's `description` (0.2.x sends `""` on the start event). */
  readonly description: string;
  /** The id of the `task` call that started it, when the stream shows it. */
  readonly taskCallId?: string;
  /** Whether its `subagent_end` arrived; `false` while it runs, and for one the stream ended first. */
  readonly ended: boolean;
  /** Its `subagent_*` events; completes at its `subagent_end`, or when the source ends. Hot, like `groupBy`'s groups. */
  readonly events$: Observable<SubagentEvent>;
}

/**
 * The `SubagentRun` of a delegation: its fields read the tracker's state as
 * it changes. Ids the stream did not give are left out rather than set to
 * `undefined`, so that a test's `deepStrictEqual` needs no `undefined`s.
 */
export function subagentRun(delegation: RunDelegation, events$: Observable<SubagentEvent>): SubagentRun {
  const { instanceId, taskCallId } = delegation;
  const view = {
    key: delegation.key,
    ...(instanceId !== undefined && { instanceId }),
    get name() {
      return delegation.name;
    },
    get subagentType() {
      return delegation.subagentType;
    },
    get description() {
      return delegation.description;
    },
    get ended() {
      return delegation.ended;
    },
    ...(taskCallId !== undefined && { taskCallId }),
    events$,
  };
  // Not known yet: kept readable, since a re-sent `task` call may tell it, but not listed as a key.
  if (delegation.subagentType === undefined) Object.defineProperty(view, 'subagentType', { enumerable: false });
  // Under exactOptionalPropertyTypes (tsconfig.exact.json) the getter's `undefined` needs the assertion: it is the hidden key.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  return view as SubagentRun;
}
