import {
  concat,
  defer,
  filter,
  groupBy,
  map,
  mergeMap,
  Subject,
  tap,
  type Observable,
  type OperatorFunction,
} from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events.js';
import type { Delegation, DelegationSink, SubagentEvent } from './delegations.js';
import { DelegationTracker } from './DelegationTracker.js';

export type { SubagentEvent } from './delegations.js';

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

/** Where `DelegationTracker` sent one event: a delegation's start, one of its events, or its end. */
interface Routing {
  readonly delegation: Delegation;
  readonly event: SubagentEvent | undefined;
  readonly end: boolean;
}

const NOTHING: readonly Routing[] = [];

/** Collects what the tracker reports for one event, for `mergeMap` to pass on in order. */
class Router implements DelegationSink {
  private routed: Routing[] = [];

  start(delegation: Delegation): void {
    this.routed.push({ delegation, event: undefined, end: false });
  }

  event(delegation: Delegation, event: SubagentEvent): void {
    this.routed.push({ delegation, event, end: false });
  }

  end(delegation: Delegation): void {
    this.routed.push({ delegation, event: undefined, end: true });
  }

  /** What was routed since the last call; most events route nothing. */
  drain(): readonly Routing[] {
    if (this.routed.length === 0) return NOTHING;
    const routed = this.routed;
    this.routed = [];
    return routed;
  }
}

/**
 * The `SubagentRun` of a delegation: its fields read the tracker's state as
 * it changes. Ids the stream did not give are left out rather than set to
 * `undefined`, so that a test's `deepStrictEqual` needs no `undefined`s.
 */
function subagentRun(delegation: Delegation, events$: Observable<SubagentEvent>): SubagentRun {
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

const isEvent = (routing: Routing): routing is Routing & { readonly event: SubagentEvent } =>
  routing.event !== undefined;

/**
 * Emits one `SubagentRun` per delegation as soon as it starts, built on
 * `groupBy`: its `events$` is the group of that delegation's `subagent_*`
 * events, and completes at its `subagent_end` (the end of the group's duration) or when
 * the source completes; a source error errors it and the outer Observable.
 * Subscribe to `events$` when the run is emitted, as with `groupBy`'s groups;
 * and as with `groupBy`, the source stays subscribed while any `events$` is,
 * even after the outer subscriber has gone (`take(1)` then `mergeMap` to its
 * events).
 *
 * A delegation is keyed by its `instance_id`, so that same-name sub-agents
 * running at once keep their own events whatever the order of `subagent_end`
 * and the task's result. Streams without instance ids are grouped by name and
 * `task` call; `DelegationTracker` documents how.
 *
 * ```ts
 * run$.pipe(
 *   groupSubagents(),
 *   mergeMap((sub) => sub.events$.pipe(count(), map((n) => `${sub.name}: ${n} events`))),
 * ).subscribe(console.log);
 * ```
 *
 * ```
 * source:           --s--e1--e2--x--|     s: subagent_start, e: subagent_*, x: subagent_end
 * groupSubagents(): --A-------------|
 * A.events$:          ---e1--e2--|
 * ```
 */
export function groupSubagents(): OperatorFunction<EvoEvent | UnknownEvent, SubagentRun> {
  return (source) =>
    defer(() => {
      const router = new Router();
      const tracker = new DelegationTracker(router);
      const routed$ = concat(
        source.pipe(
          mergeMap((event) => {
            tracker.push(event);
            return router.drain();
          }),
        ),
        // Once the source has completed: the delegations still open end with it.
        defer(() => {
          tracker.finish();
          return router.drain();
        }),
      );
      // An end is told to its group's duration rather than sent into it: a
      // duration that subscribed to the group would hold the source as a listener.
      const ended$ = new Subject<Delegation>();
      return routed$.pipe(
        tap((routing) => {
          if (routing.end) ended$.next(routing.delegation);
        }),
        filter((routing) => !routing.end),
        groupBy((routing) => routing.delegation, {
          duration: (group) => ended$.pipe(filter((delegation) => delegation === group.key)),
        }),
        map((group) =>
          subagentRun(
            group.key,
            group.pipe(
              filter(isEvent),
              map((routing) => routing.event),
            ),
          ),
        ),
      );
    });
}
