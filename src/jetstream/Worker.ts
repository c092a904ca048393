import type { NatsConnection } from '@nats-io/transport-node';
import type { Consumer, JsMsg } from '@nats-io/jetstream';
import type { Subscriber } from 'rxjs';
import { DEFAULTS } from './defaults.js';
import { CancelWatch } from './CancelWatch.js';
import { BrokerError, brokerError } from './errors.js';
import { serverOf } from './layout.js';
import { RunHeaders } from './records.js';
import { RequestHandler } from './RequestHandler.js';
import type { WorkerActivity, WorkerSettings } from './workerTypes.js';
import { workersConsumer } from './workersConsumer.js';

/** How long a request handed back after a failed broker call waits before it is delivered again. */
const RETAKE_DELAY_MS = 1000;

/** The run id a request's header names, for reports. */
function runIdOf(msg: JsMsg): string | undefined {
  return msg.headers?.get(RunHeaders.runId) || undefined;
}

/**
 * One subscription of `serveRuns`: watches cancels, pulls requests from the
 * workers' consumer while fewer than `concurrency` are being pulled or
 * handled, and hands each to its `RequestHandler`.
 */
export class Worker {
  private stopped = false;
  private slotFreed: (() => void) | undefined;
  /** Pulls waiting for a request, and requests taken and not yet done with: together at most `concurrency`. */
  private pulling = 0;
  private handling = 0;
  private readonly handler: RequestHandler;
  private readonly cancels: CancelWatch;

  constructor(
    private readonly nc: NatsConnection,
    private readonly settings: WorkerSettings,
    private readonly subscriber: Subscriber<WorkerActivity>,
  ) {
    const emit = (activity: WorkerActivity) => {
      if (!this.stopped) subscriber.next(activity);
    };
    this.cancels = new CancelWatch(nc, settings, emit);
    this.handler = new RequestHandler(nc, settings, { emit, isStopped: () => this.stopped }, this.cancels);
  }

  start(): void {
    this.serve().catch((err: unknown) => this.fail(err));
  }

  /** Stops taking work, stops the runs in progress and returns their requests. */
  stop(): void {
    this.stopped = true;
    this.release();
    this.handler.stopAll();
    this.cancels.stop();
  }

  private async serve(): Promise<void> {
    // Before any request is taken: a cancel stored from then on reaches the run that holds it.
    await this.cancels.start();
    const consumer = await workersConsumer(this.nc, this.settings.layout, this.settings.ackWaitMs);
    while (!this.stopped) {
      if (this.handling + this.pulling >= this.settings.concurrency) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      const msg = await this.pull(consumer);
      if (!msg) continue;
      if (this.stopped) {
        msg.nak();
        break;
      }
      this.take(msg);
    }
  }

  /** One request, or `null` when none came (or the broker is away: then after a pause). */
  private async pull(consumer: Consumer): Promise<JsMsg | null> {
    this.pulling++;
    try {
      return await consumer.next({ expires: DEFAULTS.pullExpiresMs });
    } catch (err) {
      if (this.nc.isClosed())
        throw new BrokerError(`stopped taking work: the connection to ${serverOf(this.nc)} closed`, { cause: err });
      // The broker is away or restarting: ask again shortly.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return null;
    } finally {
      this.pulling--;
    }
  }

  private take(msg: JsMsg): void {
    this.handling++;
    void this.handler
      .handle(msg)
      .catch((err: unknown) => {
        const error = err instanceof BrokerError ? err : brokerError(this.nc, 'could not take a run request', err);
        if (this.nc.isClosed()) return this.fail(error);
        // A broker call failed or timed out before the run started: the request goes back,
        // to be taken again after a pause, and the worker goes on.
        msg.nak(RETAKE_DELAY_MS);
        this.handler.report({ type: 'retrying', runId: runIdOf(msg), error });
      })
      .finally(() => {
        this.handling--;
        this.release();
      });
  }

  private fail(err: unknown): void {
    if (!this.stopped) this.subscriber.error(err);
  }

  private release(): void {
    const wake = this.slotFreed;
    this.slotFreed = undefined;
    wake?.();
  }
}
