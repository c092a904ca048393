import type { Observable } from 'rxjs';
import type { FlowControl } from '../common/FlowControl.js';
import type { IndexedEvent, RunStatus, StartRequest } from './wire.js';

/** Options of `RunHub.start`. */
export interface StartOptions {
  /**
   * A client's key for this start (the `Idempotency-Key` header): a start
   * with a key already used returns that run instead of starting another.
   * 1 to 255 visible ASCII characters.
   */
  readonly idempotencyKey?: string | undefined;
}

/** What `RunHub.start` gives: the run's id, and whether this call created it (`false`: a repeated key). */
export interface StartedRun {
  /** The run's id. */
  readonly id: string;
  /** Whether this call created the run; `false` when its idempotency key named a run already. */
  readonly created: boolean;
}

/** Options of `RunHub.follow`. */
export interface FollowOptions {
  /** The index of the last event the reader has (`Last-Event-ID`): it gets the ones after. Default: from the first. */
  readonly after?: number | undefined;
  /** A reader's hand on the tap: while paused, its place in the run's log waits and nothing is copied for it. */
  readonly flow?: FlowControl | undefined;
}

/**
 * Runs as resources: started once, named by an id, followed by many readers
 * from any index, cancelled on purpose, found again after a restart.
 * `runHub()` keeps them in this process (in memory or a directory);
 * `jetStreamRunHub()` across hosts.
 */
export interface RunHub {
  /**
   * Starts a run under the hub's policy and returns its id once it is
   * recorded. Refuses with a `RunHubError`: `RunRequestError` (the request),
   * `HubFullError` (`maxLive`), `IdempotencyKeyReusedError`, `HubClosedError`.
   */
  start(request: StartRequest, options?: StartOptions): Promise<StartedRun>;
  /**
   * The run's events from `after` on, live or finished: cold, each
   * subscription one reader. Completes when the run completed; errors with
   * the error of its status when it ended otherwise (`CancelledError`,
   * `RunInterruptedError`, the run's `ExitError`…), and with
   * `UnknownRunError` or `ForgottenRunError` for a run it does not hold.
   * Never starts anything.
   */
  follow(id: string, options?: FollowOptions): Observable<IndexedEvent>;
  /** The run's status; `UnknownRunError` or `ForgottenRunError` if the hub does not hold it. */
  status(id: string): Promise<RunStatus>;
  /** The runs the hub holds, oldest first. */
  list(): Promise<readonly RunStatus[]>;
  /**
   * Stops a run (SIGINT, then SIGTERM and SIGKILL to its process group) and
   * resolves with its status: ended, or, where the run is stopped elsewhere
   * (`jetStreamRunHub`: a queued run, or a worker that did not record the end
   * within `cancelTimeoutMs`), still `queued` or `running` with the cancel
   * pending in `cancelRequestedAt` (`runsHandler` answers 202). `runHub`
   * resolves once the run has ended and its process is gone. A run already
   * ended is left as it is: cancelling is idempotent.
   */
  cancel(id: string): Promise<RunStatus>;
  /** Stops every live run, waits until their processes are gone, and starts nothing more. */
  close(): Promise<void>;
}
