import type { NatsConnection } from '@nats-io/transport-node';
import type { Subscriber } from 'rxjs';
import { DEFAULTS } from '../wire/defaults.js';
import { CancelWatch } from './CancelWatch.js';
import { BrokerError, brokerError } from '../wire/errors.js';
import { serverOf } from '../wire/clients.js';
import { RunHeaders } from '../wire/records.js';
import type { RequestDelivery } from './RequestDelivery.js';
import { RequestHandler } from './RequestHandler.js';
import { WorkerInbox } from './WorkerInbox.js';
import type { WorkerActivity, WorkerSettings } from './workerTypes.js';
import { workersConsumer } from './workersConsumer.js';
import { pause } from '../wire/backoff.js';

/** The run id a request's header names, for reports. */
function runIdOf(msg: RequestDelivery): string | undefined {
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
  private inbox: WorkerInbox | undefined;
  /** Whether the last pull failed: a series of failures is reported once. */
  private pullFailing = false;

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
    this.inbox?.stop();
    this.handler.stopAll();
    this.cancels.stop();
  }

  private async serve(): Promise<void> {
    // Before any request is taken: a cancel stored from then on reaches the run that holds it.
    await this.cancels.start();
    await workersConsumer(this.nc, this.settings.layout, this.settings.ackWaitMs);
    if (this.stopped) return;
    const adopt = (delivery: RequestDelivery) => this.handler.adoptIfRunning(delivery);
    const inbox = (this.inbox = new WorkerInbox(this.nc, this.settings.layout, DEFAULTS.pullExpiresMs, adopt));
    while (!this.stopped) {
      if (this.handling + this.pulling >= this.settings.concurrency) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        continue;
      }
      const msg = await this.pull(inbox);
      if (!msg) continue;
      if (this.stopped) {
        msg.nak();
        break;
      }
      this.take(msg);
    }
  }

  /** One request, or `null` when none came (or the broker is away: then after a pause). */
  private async pull(inbox: WorkerInbox): Promise<RequestDelivery | null> {
    this.pulling++;
    try {
      const delivery = await inbox.next();
      this.pullFailing = false;
      return delivery;
    } catch (err) {
      if (this.nc.isClosed())
        throw new BrokerError(`stopped taking work: the connection to ${serverOf(this.nc)} closed`, { cause: err });
      if (inbox.failure) throw inbox.failure;
      await this.pullFailed(err);
      return null;
    } finally {
      this.pulling--;
    }
  }

  /**
   * The broker is away, restarting or partitioned, or the consumer is gone:
   * said once for the series, the consumer made again if it was deleted, and
   * the next pull after a pause.
   */
  private async pullFailed(err: unknown): Promise<void> {
    if (!this.pullFailing) {
      this.pullFailing = true;
      this.handler.report({
        type: 'retrying',
        runId: undefined,
        error: brokerError(this.nc, 'could not pull a run request', err),
      });
    }
    await workersConsumer(this.nc, this.settings.layout, this.settings.ackWaitMs).catch(() => undefined);
    await pause(500);
  }

  private take(msg: RequestDelivery): void {
    this.handling++;
    void this.handler
      .handle(msg)
      .catch((err: unknown) => {
        const error = err instanceof BrokerError ? err : brokerError(this.nc, 'could not take a run request', err);
        if (this.nc.isClosed()) return this.fail(error);
        // A broker call failed or timed out before the run started: the request goes back,
        // to be taken again after a pause, and the worker goes on.
        msg.nak(DEFAULTS.retakeDelayMs);
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
