import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { recordQueuedCancel } from './cancelled.js';
import { brokerError } from '../wire/errors.js';
import { checkRunId } from '../wire/layout.js';
import { readStatus } from '../read/status.js';
import type { WorkerActivity, WorkerSettings } from './workerTypes.js';

/**
 * A worker's watch on cancels: a core subscription to every run's cancel
 * subject, made before the worker takes work (it also sees what JetStream
 * stores there). A cancel of a run this worker holds stops it; a cancel of a
 * run with no status records is recorded at once by whichever worker gets
 * there first, so that a queued run's cancel takes effect while every worker
 * is busy. What a subscription misses (a reconnection, a missing permission),
 * the checks of the stored cancel catch: before an attempt starts, after its
 * `started` record, and at each confirmation of a run in progress.
 */
export class CancelWatch {
  private subscription: Subscription | undefined;
  /** How to stop each run this worker holds, by run id. */
  private readonly held = new Map<string, () => void>();
  private readonly runPrefix: string;

  constructor(
    private readonly nc: NatsConnection,
    private readonly settings: WorkerSettings,
    private readonly emit: (activity: WorkerActivity) => void,
  ) {
    this.runPrefix = settings.layout.allCancelSubjects.slice(0, -'*.cancel'.length);
  }

  /** Subscribes; resolves once the server has the subscription, so that no cancel stored after is missed. */
  async start(): Promise<void> {
    const { allCancelSubjects } = this.settings.layout;
    this.subscription = this.nc.subscribe(allCancelSubjects, {
      callback: (err, msg) => {
        if (!err) this.onCancel(msg.subject.slice(this.runPrefix.length, -'.cancel'.length));
      },
    });
    try {
      await this.nc.flush();
    } catch (err) {
      throw brokerError(this.nc, `could not subscribe to ${allCancelSubjects}`, err);
    }
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.held.clear();
  }

  /** Until the returned function is called, a cancel of `runId` calls `cancel`. */
  hold(runId: string, cancel: () => void): () => void {
    this.held.set(runId, cancel);
    return () => {
      if (this.held.get(runId) === cancel) this.held.delete(runId);
    };
  }

  private onCancel(runId: string): void {
    const cancel = this.held.get(runId);
    if (cancel) return cancel();
    // A failure here is harmless: the worker that takes the request records the cancel.
    void this.recordQueued(runId).catch(() => undefined);
  }

  /** Records the cancel of a run that has no status records yet; one with records has a worker that will. */
  private async recordQueued(runId: string): Promise<void> {
    checkRunId(runId);
    if ((await readStatus(this.nc, this.settings.layout, runId)) !== undefined) return;
    const record = await recordQueuedCancel(this.nc, this.settings, runId, undefined);
    if (record) this.emit({ type: 'cancelled', runId, attempt: 0, phase: 'queued' });
  }
}
