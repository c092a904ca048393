import { Observable, Subject, type OperatorFunction } from 'rxjs';
import type { EvoEvent } from '../src/events/EvoEvent.js';
import type { UnknownEvent } from '../src/events/UnknownEvent.js';
import type { Delegation } from './Delegation.js';
import { DelegationTracker } from './DelegationTracker.js';
import type { SubagentEvent } from './SubagentEvent.js';
import type { SubagentRun } from './SubagentRun.js';

/**
 * Emits one `SubagentRun` per delegation as soon as it starts, like
 * `groupBy`: its `events$` carries that delegation's `subagent_*` events and
 * completes at its `subagent_end`, or when the source completes or errors
 * (the error goes to the outer Observable). Subscribe to `events$` when the
 * run is emitted, as with `groupBy`'s groups.
 *
 * A delegation is keyed by its `task` call. A second `subagent_start` renames
 * it (`name` always reads the latest), and same-name delegations can run at
 * once; `DelegationTracker` documents how events are told apart.
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
    new Observable<SubagentRun>((subscriber) => {
      const channels = new Map<Delegation, Subject<SubagentEvent>>();
      const tracker = new DelegationTracker({
        start: (delegation) => {
          const events = new Subject<SubagentEvent>();
          channels.set(delegation, events);
          subscriber.next({
            key: delegation.key,
            get name() {
              return delegation.name;
            },
            get description() {
              return delegation.description;
            },
            taskCallId: delegation.taskCallId,
            events$: events.asObservable(),
          });
        },
        event: (delegation, event) => channels.get(delegation)?.next(event),
        end: (delegation) => {
          channels.get(delegation)?.complete();
          channels.delete(delegation);
        },
      });
      return source.subscribe({
        next: (event) => tracker.push(event as EvoEvent),
        error: (err: unknown) => {
          tracker.finish();
          subscriber.error(err);
        },
        complete: () => {
          tracker.finish();
          subscriber.complete();
        },
      });
    });
}
