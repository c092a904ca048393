import type { NatsConnection } from '@nats-io/transport-node';
import type { Observable, Subscription } from 'rxjs';
import type { EvoEvent } from '../../events/codecs.js';
import type { CancelWatch } from './CancelWatch.js';
import { AttemptSupersededError, brokerError, StorageLimitError } from '../wire/errors.js';
import { writeAttempt } from '../write/publishTo.js';
import type { FinishedRecord } from '../wire/records.js';
import type { RequestDelivery } from './RequestDelivery.js';
import { RequestLease, type LeaseTiming } from './RequestLease.js';
import { DEFAULTS } from '../wire/defaults.js';
import { cancelRequested, supersedingError } from '../read/status.js';
import type { StartGate } from './StartGate.js';
import type { ThreadRecord } from './ThreadRecord.js';
import type { RunRequest } from '../wire/runRequest.js';
import type { WorkerActivity, WorkerSettings } from './workerTypes.js';

/** How long a request whose run found no room in the events stream waits before it is taken again. */
const NO_ROOM_RETAKE_DELAY_MS = 5000;

/**
 * A lease's timing for `ackWaitMs`: a confirmation every third of it, each
 * waiting for its answer a second at most, tried again every 250 ms while
 * unanswered: an election of some seconds leaves several tries within the
 * ack wait.
 */
function leaseTiming(ackWaitMs: number): LeaseTiming {
  const heartbeatMs = Math.max(250, Math.floor(ackWaitMs / 3));
  return {
    heartbeatMs,
    answerMs: Math.min(DEFAULTS.progressAnswerMs, heartbeatMs),
    retryMs: Math.min(DEFAULTS.progressRetryMs, heartbeatMs),
  };
}

/** What a request handler reports to its worker. */
export interface WorkerHooks {
  emit(activity: WorkerActivity): void;
  isStopped(): boolean;
}

/** The attempt a request is to run as, and the status sequence its records are conditional on. */
export interface Attempt {
  readonly request: RunRequest;
  readonly number: number;
  readonly fence: number;
}

/** What every attempt of one worker shares. */
export interface AttemptContext {
  readonly nc: NatsConnection;
  readonly settings: WorkerSettings;
  readonly hooks: WorkerHooks;
  readonly cancels: CancelWatch;
}

/**
 * One attempt of a request in progress on this worker: its lease on the
 * request, its run through `publishTo` (the CLI held by its `StartGate`
 * until the `started` record is stored and no cancel is), and how it settles:
 * once, when the run ends or is abandoned, the request acknowledged, handed
 * back or left to the attempt that superseded it.
 */
export class AttemptRun {
  /** Resolves once the attempt has settled. */
  readonly settled: Promise<void>;
  private readonly lease: RequestLease;
  private recorded: FinishedRecord | undefined;
  private isSettled = false;
  private subscription: Subscription | undefined;
  private unhold: () => void = () => undefined;
  private resolveSettled: () => void = () => undefined;

  constructor(
    private readonly context: AttemptContext,
    private readonly msg: RequestDelivery,
    private readonly attempt: Attempt,
    private readonly gate: StartGate,
    /** Called first as it settles: the worker no longer holds the request as running. */
    private readonly onSettle: () => void,
  ) {
    this.settled = new Promise<void>((resolve) => (this.resolveSettled = resolve));
    this.lease = new RequestLease(msg, leaseTiming(context.settings.ackWaitMs), {
      onBeat: () => this.beat(),
      onUnconfirmed: (error, unconfirmedForMs) => this.unconfirmed(error, unconfirmedForMs),
    });
  }

  private get runId(): string {
    return this.attempt.request.runId;
  }

  /** Runs `events$`, the gated run of `prompt`, into the run's attempt subject; `thread` hears of its `finished` record. */
  start(prompt: string, events$: Observable<EvoEvent>, thread: ThreadRecord): void {
    const { nc, settings, cancels, hooks } = this.context;
    const { runId, gate } = this;
    this.unhold = cancels.hold(runId, () => gate.cancel());
    hooks.emit({ type: 'started', runId, attempt: this.attempt.number });
    this.subscription = events$
      .pipe(
        writeAttempt(nc, {
          ...settings.writeLimits,
          layout: settings.layout,
          runId,
          attempt: this.attempt.number,
          worker: settings.worker,
          prompt,
          flow: gate.flow,
          lastStatusSequence: this.attempt.fence,
          requestSequence: this.msg.seq,
          // A cancel stored before the started record is seen now; one after it reaches the run through the watch.
          onStarted: () =>
            void gate
              .admit(() => cancelRequested(nc, settings.layout, runId))
              .catch((err: unknown) =>
                this.abandon(brokerError(nc, `could not check for a cancel of run ${runId}`, err)),
              ),
          onFinished: (record) => {
            this.recorded = record;
            thread.finished(record);
          },
        }),
      )
      .subscribe({ error: (error: unknown) => this.settle(error), complete: () => this.settle() });
  }

  /** Delivered again while it runs here: the lease goes on through the newer delivery. */
  adopt(msg: RequestDelivery): void {
    this.lease.adopt(msg);
  }

  /** Stops the run and hands the request back. */
  stop(): void {
    this.subscription?.unsubscribe();
    this.lease.nak();
  }

  /** Ends the attempt without a record: the request goes back. */
  private abandon(error: unknown): void {
    this.subscription?.unsubscribe();
    this.settle(error);
  }

  private settle(error?: unknown): void {
    if (this.isSettled) return;
    this.isSettled = true;
    this.onSettle();
    this.unhold();
    this.resolveSettled();
    this.report(error);
  }

  /** Settles the request of an attempt that ended, and reports how. */
  private report(error: unknown): void {
    const { hooks } = this.context;
    const { runId, lease, recorded } = this;
    const attempt = this.attempt.number;
    if (hooks.isStopped()) return lease.release();
    if (error instanceof AttemptSupersededError) {
      // Another attempt owns the run and the request now: leave both alone.
      lease.release();
      return hooks.emit({ type: 'superseded', runId, attempt, nextAttempt: error.nextAttempt });
    }
    if (!recorded) {
      // A stream with no room has room again only as runs age out: the request is not taken again at once.
      lease.nak(error instanceof StorageLimitError ? NO_ROOM_RETAKE_DELAY_MS : undefined);
      return hooks.emit({ type: 'returned', runId, attempt, error });
    }
    lease.ack();
    if (recorded.cancelled) return hooks.emit({ type: 'cancelled', runId, attempt, phase: recorded.cancelled });
    const outcome = error === undefined ? { outcome: 'completed' as const } : { outcome: 'failed' as const, error };
    hooks.emit({ type: 'finished', runId, attempt, ...outcome });
  }

  /** A confirmation the server did not answer: reported, while the attempt runs. */
  private unconfirmed(error: unknown, unconfirmedForMs: number): void {
    if (this.isSettled) return;
    const { runId, attempt } = this;
    this.context.hooks.emit({ type: 'unconfirmed', runId, attempt: attempt.number, error, unconfirmedForMs });
  }

  /**
   * At each confirmation: a newer attempt was started (this worker was thought
   * dead): the run is abandoned, so that the CLI stops now, not at its end; or
   * a cancel is stored that the watch missed (a reconnection): the run is stopped.
   */
  private beat(): void {
    const { nc, settings } = this.context;
    void supersedingError(nc, settings.layout, this.runId, this.attempt.number).then(
      (error) => error && !this.isSettled && this.abandon(error),
    );
    void cancelRequested(nc, settings.layout, this.runId).then(
      (cancelled) => cancelled && this.gate.cancel(),
      () => undefined,
    );
  }
}
