import type { RequestField } from '../../process/requestedOptions.js';
import type { RunOptions } from '../../process/run.js';
import type { CancelPhase } from '../wire/cancelRequest.js';
import type { PipeRun } from '../wire/pipeRun.js';
import type { JetStreamLayout } from '../wire/layout.js';
import type { WriteLimits } from '../write/publishTo.js';
import type { PublishTiming } from '../write/publishStored.js';
import type { RunRequest } from '../wire/runRequest.js';

/** What a worker did, as `serveRuns` emits it. */
export type WorkerActivity =
  | {
      /** Discriminant: the attempt began. */
      readonly type: 'started';
      /** The run the attempt is of. */
      readonly runId: string;
      /** The attempt's number, from 1. */
      readonly attempt: number;
    }
  | {
      /** Discriminant: the attempt ended and its `finished` record was stored. */
      readonly type: 'finished';
      /** The run the attempt is of. */
      readonly runId: string;
      /** The attempt's number, from 1. */
      readonly attempt: number;
      /** `failed` comes with `error`. */
      readonly outcome: 'completed' | 'failed';
      /** What the run failed with. */
      readonly error?: unknown;
    }
  /** The attempt could not be recorded (broker unreachable): the request goes back to the queue. */
  | {
      /** Discriminant of this activity. */
      readonly type: 'returned';
      /** The run the attempt is of. */
      readonly runId: string;
      /** The attempt's number, from 1. */
      readonly attempt: number;
      /** The broker's error. */
      readonly error: unknown;
    }
  /** A broker call failed or timed out while taking the request: it was handed back to be taken again. */
  | {
      /** Discriminant of this activity. */
      readonly type: 'retrying';
      /** The request's run; `undefined` when it could not be read from the message. */
      readonly runId: string | undefined;
      /** The broker's error. */
      readonly error: unknown;
    }
  /**
   * The server did not answer this worker's confirmation that it still runs
   * the attempt (an election of the workers' consumer's leader, a server
   * away), `unconfirmedForMs` after the last it answered: tried again
   * shortly. Past `ackWaitMs` unconfirmed, another worker may start the next
   * attempt, and this one is stopped as `superseded`.
   */
  | {
      /** Discriminant of this activity. */
      readonly type: 'unconfirmed';
      /** The run the attempt is of. */
      readonly runId: string;
      /** The attempt's number, from 1. */
      readonly attempt: number;
      /** Why the confirmation failed. */
      readonly error: unknown;
      /** Milliseconds since the server last answered a confirmation. */
      readonly unconfirmedForMs: number;
    }
  /** Another attempt was started while this one ran: what it wrote last was refused, and it stopped. */
  | {
      /** Discriminant of this activity. */
      readonly type: 'superseded';
      /** The run the attempt is of. */
      readonly runId: string;
      /** The attempt that stopped. */
      readonly attempt: number;
      /** The attempt started in its place. */
      readonly nextAttempt: number;
    }
  /**
   * `cancelRun` ended the run: `running`, its attempt was stopped and recorded
   * as failed with a `CancelledError`; `queued`, no attempt was running (its
   * end recorded with attempt 0 for a run never started) and none will be.
   */
  | {
      /** Discriminant of this activity. */
      readonly type: 'cancelled';
      /** The run cancelled. */
      readonly runId: string;
      /** The attempt stopped or recorded; 0 for a run never started. */
      readonly attempt: number;
      /** Whether an attempt was `running` or the run was `queued`. */
      readonly phase: CancelPhase;
    }
  /** Delivered again after its run had already ended, or submitted again while it runs: acknowledged without running it. */
  | {
      /** Discriminant of this activity. */
      readonly type: 'skipped';
      /** The run the request is for. */
      readonly runId: string;
      /** The attempt it would have been. */
      readonly attempt: number;
      /** Why it was not run. */
      readonly reason: string;
    }
  /** The request will not be run (again): a bad request, or every attempt's worker died. */
  | {
      /** Discriminant of this activity. */
      readonly type: 'dead-lettered';
      /** The request's run; `undefined` when the request names none. */
      readonly runId: string | undefined;
      /** Why it will not be run. */
      readonly reason: string;
    };

export type { PipeRun } from '../wire/pipeRun.js';

/** The options of `serveRuns`, checked and with their defaults. */
export interface WorkerSettings {
  readonly layout: JetStreamLayout;
  readonly concurrency: number;
  readonly maxAttempts: number;
  readonly ackWaitMs: number;
  readonly worker: string;
  readonly timing: PublishTiming;
  readonly runOptions: Omit<RunOptions, 'prompt'> | ((request: RunRequest, attempt: number) => RunOptions) | undefined;
  readonly allowFromRequest: readonly RequestField[];
  /** `publish`, checked and with its defaults: the same for every attempt. */
  readonly writeLimits: WriteLimits;
  readonly pipeRun: PipeRun | undefined;
}
