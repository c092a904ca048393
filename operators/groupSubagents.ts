import { defer, filter, groupBy, map, Subject, tap, type OperatorFunction } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import type { Delegation, SubagentEvent } from './delegations.js';
import { DelegationTracker } from './DelegationTracker.js';
import { eventByEvent, Reports } from './eventByEvent.js';
import { subagentRun, type SubagentRun } from './subagentRun.js';

export type { SubagentEvent } from './delegations.js';
export type { SubagentRun } from './subagentRun.js';

/** Where `DelegationTracker` sent one event: a delegation's start, one of its events, or its end. */
interface Routing {
  readonly delegation: Delegation;
  readonly event: SubagentEvent | undefined;
  readonly end: boolean;
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
      const routed = new Reports<Routing>();
      const tracker = new DelegationTracker({
        start: (delegation) => routed.push({ delegation, event: undefined, end: false }),
        event: (delegation, event) => routed.push({ delegation, event, end: false }),
        end: (delegation) => routed.push({ delegation, event: undefined, end: true }),
      });
      // Once the source has completed, the delegations still open end with it.
      const routed$ = eventByEvent(
        source,
        routed,
        (event) => tracker.push(event),
        () => tracker.finish(),
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
