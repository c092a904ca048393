import { Observable, Subject, Subscription, type OperatorFunction } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events.js';
import { DelegationTracker, type Delegation, type SubagentEvent } from './DelegationTracker.js';

export type { SubagentEvent } from './DelegationTracker.js';

/** One delegation to a sub-agent, as `groupSubagents` emits it. */
export interface SubagentRun {
  /** Its `instance_id`; in streams without one, the id of the `task` call that started it, else `subagent#n`. */
  readonly key: string;
  /** The producer's id of this delegation (0.2.x); `undefined` in streams without one. */
  readonly instanceId: string | undefined;
  /** The latest name: it changes when an older producer replaces the `sub-agent` placeholder. */
  readonly name: string;
  /** The `subagent_type` its `task` call asked for. */
  readonly subagentType: string | undefined;
  /** What it was asked to do: its `task` call's `description` (0.2.x sends `""` on the start event). */
  readonly description: string;
  /** The id of the `task` call that started it, when the stream shows it. */
  readonly taskCallId: string | undefined;
  /** Whether its `subagent_end` arrived; `false` while it runs, and for one the stream ended first. */
  readonly ended: boolean;
  /** Its `subagent_*` events; completes at its `subagent_end`, or when the source ends. Hot, like `groupBy`'s groups. */
  readonly events$: Observable<SubagentEvent>;
}

/**
 * Emits one `SubagentRun` per delegation as soon as it starts, like
 * `groupBy`: its `events$` carries that delegation's `subagent_*` events and
 * completes at its `subagent_end`, or when the source completes or errors
 * (the error goes to the outer Observable). Subscribe to `events$` when the
 * run is emitted, as with `groupBy`'s groups; and as with `groupBy`, the
 * source stays subscribed while any `events$` is, even after the outer
 * subscriber has gone (`take(1)` then `mergeMap` to its events).
 *
 * A delegation is keyed by its `instance_id`, so that same-name sub-agents
 * running at once keep their own events whatever the order of `subagent_end`
 * and the task's result. Streams without instance ids are grouped by name and
 * `task` call; `DelegationTracker` documents how. An exception
 * while routing errors the outer subscriber.
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
      /** Subscriptions to the `events$` of open delegations: they hold the source, as `groupBy`'s groups do. */
      let listeners = 0;
      let outerGone = false;
      // A container first: a synchronous source can end it before `subscribe` returns.
      const upstream = new Subscription();
      const release = () => {
        if (outerGone && listeners === 0) upstream.unsubscribe();
      };
      const eventsOf = (channel: Subject<SubagentEvent>) =>
        new Observable<SubagentEvent>((inner) => {
          listeners++;
          const subscription = channel.subscribe(inner);
          return () => {
            subscription.unsubscribe();
            listeners--;
            release();
          };
        });
      const endAll = () => {
        for (const channel of channels.values()) channel.complete();
        channels.clear();
      };
      const tracker = new DelegationTracker({
        start: (delegation) => {
          const channel = new Subject<SubagentEvent>();
          channels.set(delegation, channel);
          if (outerGone) return;
          subscriber.next({
            key: delegation.key,
            instanceId: delegation.instanceId,
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
            taskCallId: delegation.taskCallId,
            events$: eventsOf(channel),
          });
        },
        event: (delegation, event) => channels.get(delegation)?.next(event),
        end: (delegation) => {
          channels.get(delegation)?.complete();
          channels.delete(delegation);
        },
      });
      const fail = (err: unknown) => {
        endAll();
        subscriber.error(err);
        upstream.unsubscribe();
      };
      upstream.add(
        source.subscribe({
          next: (event) => {
            try {
              tracker.push(event);
            } catch (err) {
              fail(err);
            }
          },
          error: (err: unknown) => {
            try {
              tracker.finish();
            } catch {
              // The source's error is the one to report.
            }
            endAll();
            subscriber.error(err);
          },
          complete: () => {
            try {
              tracker.finish();
            } catch (err) {
              return fail(err);
            }
            endAll();
            subscriber.complete();
          },
        }),
      );
      return () => {
        outerGone = true;
        release();
      };
    });
}
