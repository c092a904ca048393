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
  | { readonly type: 'started'; readonly runId: string; readonly attempt: number }
  | {
      readonly type: 'finished';
      readonly runId: string;
      readonly attempt: number;
      readonly outcome: 'completed' | 'failed';
      readonly error?: unknown;
    }
  /** The attempt could not be recorded (broker unreachable): the request goes back to the queue. */
  | { readonly type: 'returned'; readonly runId: string; readonly attempt: number; readonly error: unknown }
  /** A broker call failed or timed out while taking the request: it was handed back to be taken again. */
  | { readonly type: 'retrying'; readonly runId: string | undefined; readonly error: unknown }
  /**
   * The server did not answer this worker's confirmation that it still runs
   * the attempt (an election of the workers' consumer's leader, a server
   * away), `unconfirmedForMs` after the last it answered: tried again
   * shortly. Past `ackWaitMs` unconfirmed, another worker may start the next
   * attempt, and this one is stopped as `superseded`.
   */
  | {
      readonly type: 'unconfirmed';
      readonly runId: string;
      readonly attempt: number;
      readonly error: unknown;
      readonly unconfirmedForMs: number;
    }
  /** Another attempt was started while this one ran: what it wrote last was refused, and it stopped. */
  | {
      readonly type: 'superseded';
      readonly runId: string;
      readonly attempt: number;
      readonly nextAttempt: number;
    }
  /**
   * `cancelRun` ended the run: `running`, its attempt was stopped and recorded
   * as failed with a `CancelledError`; `queued`, no attempt was running (its
   * end recorded with attempt 0 for a run never started) and none will be.
   */
  | {
      readonly type: 'cancelled';
      readonly runId: string;
      readonly attempt: number;
      readonly phase: CancelPhase;
    }
  /** Delivered again after its run had already ended, or submitted again while it runs: acknowledged without running it. */
  | { readonly type: 'skipped'; readonly runId: string; readonly attempt: number; readonly reason: string }
  | { readonly type: 'dead-lettered'; readonly runId: string | undefined; readonly reason: string };

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
