import { finalize, Observable, tap } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events.js';
import type { RunTally } from './RunTally.js';

/**
 * What follows one subscription to a run through a `RunTally` (a trace of
 * it): told every event when it keeps its own tally, and how the run ended.
 */
export interface TallyFollower {
  /** One event, for its own tally. */
  push(event: EvoEvent | UnknownEvent): void;
  complete(): void;
  fail(error: unknown): void;
  /** Teardown: after `complete` or `fail`, or when unsubscribed first. */
  close(): void;
}

/**
 * Starts following one subscription: through `tally` when one is given, else
 * through a tally of its own. `undefined` when there is nothing to follow (a
 * trace that records nothing).
 */
export type Follow = (tally: RunTally | undefined) => TallyFollower | undefined;

/**
 * A run's events, passed on unchanged by an operator that follows them
 * through a `RunTally` (`traceRun`). Subscribed as it is, it feeds a tally of
 * its own. `summarize()`, which keeps a tally anyway, subscribes to the
 * source beneath instead and lets the follower listen to its tally: one pass
 * over each event serves both, and an event that opens or closes nothing
 * costs the follower nothing.
 */
export class TracedRun<T extends EvoEvent | UnknownEvent> extends Observable<T> {
  constructor(
    /** The events as they came, before the follower. */
    readonly upstream: Observable<T>,
    readonly follow: Follow,
  ) {
    super((subscriber) => {
      const follower = follow(undefined);
      if (follower === undefined) return upstream.subscribe(subscriber);
      return upstream
        .pipe(
          tap((event) => follower.push(event)),
          // After the push, so that a follower that throws ends its own run failed, as under summarize().
          tap({ complete: () => follower.complete(), error: (error: unknown) => follower.fail(error) }),
          finalize(() => follower.close()),
        )
        .subscribe(subscriber);
    });
  }
}
