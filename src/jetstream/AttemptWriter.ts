import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Observable, Subscriber, Subscription } from 'rxjs';
import { toJsonl } from '../decode/jsonl.js';
import type { EvoEvent, UnknownEvent } from '../events.js';
import { cancelPhaseOf } from './cancelled.js';
import { AttemptSupersededError, BrokerError, DeadLetterError, StatusMovedError } from './errors.js';
import { serverOf, type JetStreamLayout } from './layout.js';
import { publishStored, type PublishTarget, type PublishTiming } from './publishStored.js';
import { PublishQueue } from './PublishQueue.js';
import { encodeRecord, RunHeaders, serializeError, type FinishedRecord, type StartedRecord } from './records.js';
import { readStatus, type StoredStatus } from './status.js';

/** One attempt of one run as `publishTo` writes it: the options, checked and with their defaults. */
export interface AttemptPlan {
  readonly layout: JetStreamLayout;
  readonly runId: string;
  readonly attempt: number;
  readonly worker: string | undefined;
  readonly prompt: string | undefined;
  readonly lastStatusSequence: number | undefined;
  readonly requestSequence: number | undefined;
  readonly maxPendingAcks: number;
  readonly maxBufferBytes: number;
  readonly timing: PublishTiming;
  readonly onStarted: ((record: StartedRecord, sequence: number) => void) | undefined;
  readonly onFinished: ((record: FinishedRecord) => void) | undefined;
}

/** How the source ended. */
interface Ending {
  readonly error?: unknown;
  readonly failed: boolean;
}

/**
 * One subscription of `publishTo`: the `started` record, then each event of
 * the source through a `PublishQueue`, then the `finished` record once every
 * event is stored; the subscriber ends when that record is. Status records
 * are conditional on the run's status subject (see `PublishToOptions`), so a
 * superseded attempt writes nothing more and ends with `AttemptSupersededError`.
 */
export class AttemptWriter<T extends EvoEvent | UnknownEvent> {
  private readonly queue: PublishQueue;
  /**
   * This writer's part of its status records' `Nats-Msg-Id`. The stream
   * answers a repeated id as a duplicate before it checks the condition: two
   * writers of one attempt (a worker held past the ack wait, and the one given
   * the request meanwhile) sharing an id would each take the other's record
   * for their own, and both write the run. Ids of their own make the
   * condition refuse the later writer; a retry of one writer is still dropped.
   */
  private readonly writerId = randomUUID();
  private events = 0;
  /** The stream sequence of the `started` record, once stored. */
  private startSequence: number | undefined;
  private ended: Ending | undefined;
  private stopped = false;
  private finishing = false;
  private source: Subscription | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly plan: AttemptPlan,
    private readonly subscriber: Subscriber<T>,
  ) {
    const eventSubject = plan.layout.attemptSubject(plan.runId, plan.attempt);
    this.queue = new PublishQueue(
      (sequence, data) =>
        publishStored(
          nc,
          {
            subject: eventSubject,
            msgID: `${plan.runId}.${plan.attempt}.${sequence}`,
            headers: { ...this.headers(), [RunHeaders.sequence]: String(sequence) },
          },
          data,
          plan.timing,
        ),
      plan,
      () => this.finishIfDone(),
      (err) => this.fail(err),
    );
  }

  /** Writes `started`, and subscribes to the source. */
  start(source: Observable<T>): void {
    const started: StartedRecord = {
      record: 'started',
      runId: this.plan.runId,
      attempt: this.plan.attempt,
      at: new Date().toISOString(),
      ...(this.plan.worker === undefined ? {} : { worker: this.plan.worker }),
      ...(this.plan.prompt === undefined ? {} : { prompt: this.plan.prompt }),
      ...(this.plan.requestSequence === undefined ? {} : { request: this.plan.requestSequence }),
    };
    this.fence()
      .then((fence) => publishStored(this.nc, this.record('started', fence), encodeRecord(started), this.plan.timing))
      .then((ack) => {
        this.startSequence = ack.seq;
        this.plan.onStarted?.(started, ack.seq);
        this.queue.open();
        this.finishIfDone();
      })
      .catch((err: unknown) => this.refused(err));
    this.source = source.subscribe({
      next: (event) => this.next(event),
      error: (error: unknown) => this.end({ error, failed: true }),
      complete: () => this.end({ failed: false }),
    });
    if (this.stopped) this.source.unsubscribe();
  }

  /**
   * The sequence the `started` record is conditional on: the caller's, or
   * the run's last status read now, refusing an attempt the run has moved
   * past, one another writer has started, or a run that has ended. Unreadable status: unconditional, and the
   * publish says what is wrong with the broker.
   */
  private async fence(): Promise<number | undefined> {
    const { runId, attempt, lastStatusSequence, layout } = this.plan;
    if (lastStatusSequence !== undefined) return lastStatusSequence;
    let last: StoredStatus | undefined;
    try {
      last = await readStatus(this.nc, layout, runId);
    } catch {
      return undefined;
    }
    const record = last?.record;
    if (record?.record === 'dead-letter') throw new DeadLetterError(runId, record.reason, record.attempts);
    if (record && record.attempt > attempt) throw new AttemptSupersededError(runId, attempt, record.attempt);
    if (record?.record === 'finished') throw new BrokerError(`run ${runId} attempt ${attempt} has already finished`);
    // Its events' ids are the other writer's: the stream would drop them as duplicates and keep a mix of the two.
    if (record?.record === 'started' && record.attempt === attempt)
      throw new BrokerError(
        `run ${runId} attempt ${attempt} was started by another writer and never finished; write the run again as attempt ${attempt + 1}`,
      );
    return last?.sequence ?? 0;
  }

  /** Unsubscribed: stops the source, writes no record. */
  stop(): void {
    this.stopped = true;
    this.queue.close();
    this.source?.unsubscribe();
  }

  private next(event: T): void {
    if (this.stopped) return;
    this.events++;
    // Buffer.from takes small strings from Node's pooled slabs, where TextEncoder allocates a buffer each.
    if (!this.queue.push(Buffer.from(toJsonl(event), 'utf8'))) {
      return this.fail(
        new BrokerError(
          `run ${this.plan.runId}: more than ${this.plan.maxBufferBytes} bytes of events await storage on ${serverOf(this.nc)}; the broker is not keeping up`,
        ),
      );
    }
    // Passed on as it passes: the run's own subscriber is not held back by the broker.
    this.subscriber.next(event);
  }

  private end(ending: Ending): void {
    this.ended = ending;
    this.finishIfDone();
  }

  private finishIfDone(): void {
    if (this.stopped || this.finishing || !this.ended || this.startSequence === undefined || !this.queue.drained)
      return;
    this.finishing = true;
    const ending = this.ended;
    const record = this.finishedRecord(ending, this.events);
    publishStored(this.nc, this.record('finished', this.startSequence), encodeRecord(record), this.plan.timing).then(
      () => {
        if (this.stopped) return;
        this.stop();
        try {
          this.plan.onFinished?.(record);
        } catch (err) {
          return this.subscriber.error(err);
        }
        if (ending.failed) this.subscriber.error(ending.error);
        else this.subscriber.complete();
      },
      (err: unknown) => this.refused(err),
    );
  }

  /** Ends the run with a broker failure; tells the remote side if the broker still answers. */
  private fail(err: unknown): void {
    if (this.stopped) return;
    this.stop();
    if (this.startSequence === undefined || this.nc.isClosed()) return this.subscriber.error(err);
    // Only the events stored without a gap count: a consumer then ends at the error, not at a hole.
    const record = this.finishedRecord({ error: err, failed: true }, this.queue.stored);
    void publishStored(this.nc, this.record('finished', this.startSequence), encodeRecord(record), {
      ackTimeoutMs: this.plan.timing.ackTimeoutMs,
      retryForMs: 0,
    })
      .then(() => this.plan.onFinished?.(record))
      .catch(() => undefined)
      .finally(() => this.subscriber.error(err));
  }

  /** A status record was not stored: superseded (nothing more is written), or the broker failed. */
  private refused(err: unknown): void {
    if (!(err instanceof StatusMovedError)) return this.fail(err);
    if (this.stopped) return;
    this.stop();
    const { runId, attempt } = this.plan;
    void readStatus(this.nc, this.plan.layout, runId)
      .catch(() => undefined)
      .then((latest) => {
        const record = latest?.record;
        const next = record && record.record !== 'dead-letter' ? record.attempt : attempt + 1;
        this.subscriber.error(new AttemptSupersededError(runId, attempt, Math.max(next, attempt + 1), { cause: err }));
      });
  }

  private headers(): Record<string, string> {
    return { [RunHeaders.runId]: this.plan.runId, [RunHeaders.attempt]: String(this.plan.attempt) };
  }

  private record(kind: 'started' | 'finished', expectLastSequence: number | undefined): PublishTarget {
    return {
      subject: this.plan.layout.statusSubject(this.plan.runId),
      msgID: `${this.plan.runId}.${this.plan.attempt}.${kind}.${this.writerId}`,
      headers: { ...this.headers(), [RunHeaders.record]: kind },
      ...(expectLastSequence === undefined ? {} : { expectLastSequence }),
    };
  }

  private finishedRecord(ending: Ending, events: number): FinishedRecord {
    return {
      record: 'finished',
      runId: this.plan.runId,
      attempt: this.plan.attempt,
      at: new Date().toISOString(),
      events,
      startSequence: this.startSequence ?? 0,
      outcome: ending.failed ? 'failed' : 'completed',
      ...(ending.failed ? { error: serializeError(ending.error) } : {}),
      ...(this.plan.worker === undefined ? {} : { worker: this.plan.worker }),
      ...cancelledField(ending),
    };
  }
}

/** `cancelled` for the record of a run that `cancelRun` stopped: what it stopped. */
function cancelledField(ending: Ending): Pick<FinishedRecord, 'cancelled'> {
  const phase = ending.failed ? cancelPhaseOf(ending.error) : undefined;
  return phase === undefined ? {} : { cancelled: phase };
}
