import type { NatsConnection } from '@nats-io/transport-node';
import type { Observable, Subscriber, Subscription } from 'rxjs';
import { toJsonl } from '../../events/decode/jsonl.js';
import type { EvoEvent, UnknownEvent } from '../../events/codecs.js';
import type { FlowControl } from '../../common/FlowControl.js';
import { AttemptMessages, type AttemptIdentity, type Ending } from './AttemptMessages.js';
import { Backpressure } from './Backpressure.js';
import {
  AttemptSupersededError,
  BrokerError,
  DeadLetterError,
  StatusMovedError,
  type StorageLimitError,
} from '../wire/errors.js';
import { clientsOf, serverOf } from '../wire/clients.js';
import {
  ageLimitError,
  noRoomReason,
  readStreamLimits,
  runTooLargeError,
  startRemovedError,
  streamFullError,
  watchAge,
  type StreamLimits,
} from './limits.js';
import { partBytesOf } from '../wire/parts.js';
import { publishStored, type PublishTarget, type PublishTiming } from './publishStored.js';
import { PublishQueue } from './PublishQueue.js';
import { StoredCheck } from './StoredCheck.js';
import { DEFAULTS } from '../wire/defaults.js';
import { encodeRecord, type FinishedRecord, type StartedRecord } from '../wire/records.js';
import { readStatus, type StoredStatus } from '../read/status.js';

/** One attempt of one run as `publishTo` writes it: the options, checked and with their defaults. */
export interface AttemptPlan extends AttemptIdentity {
  readonly lastStatusSequence: number | undefined;
  readonly maxPendingAcks: number;
  readonly maxPendingBytes: number;
  readonly maxBufferBytes: number;
  /** Bytes of events one attempt may store; `Infinity`: no cap. */
  readonly maxRunBytes: number;
  /** The source's tap, paused above `highWaterBytes` awaiting storage and resumed below half. */
  readonly flow: FlowControl | undefined;
  readonly highWaterBytes: number;
  readonly timing: PublishTiming;
  readonly onStarted: ((record: StartedRecord, sequence: number) => void) | undefined;
  readonly onFinished: ((record: FinishedRecord) => void) | undefined;
}

/**
 * One subscription of `publishTo`: the `started` record, then each event of
 * the source through a `PublishQueue`, then the `finished` record once every
 * event is stored; the subscriber ends when that record is. Status records
 * are conditional on the run's status subject (see `PublishToOptions`), so a
 * superseded attempt writes nothing more and ends with `AttemptSupersededError`.
 * A limit the run meets (the stream's, or `maxRunBytes`) stops the source and
 * ends the run with a `StorageLimitError` that says which.
 */
export class AttemptWriter<T extends EvoEvent | UnknownEvent> {
  private readonly queue: PublishQueue;
  private readonly backpressure: Backpressure;
  private readonly messages: AttemptMessages;
  private readonly check: StoredCheck;
  private events = 0;
  private runBytes = 0;
  /** The stream sequence of the `started` record, once stored. */
  private startSequence: number | undefined;
  /** The events stream's limits, read as the attempt starts, for what they end and for saying which. */
  private limits: Promise<StreamLimits | undefined> = Promise.resolve(undefined);
  private stopWatchingAge: () => void = () => undefined;
  private ended: Ending | undefined;
  private stopped = false;
  /** Aborted as the writer stops: the check of what is stored sends nothing again after it. */
  private readonly stopping = new AbortController();
  private finishing = false;
  private source: Subscription | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly plan: AttemptPlan,
    private readonly subscriber: Subscriber<T>,
  ) {
    this.messages = new AttemptMessages(plan);
    const { eventsStream } = plan.layout;
    this.check = new StoredCheck(nc, eventsStream, this.messages, plan.timing, DEFAULTS.resendKeptBytes);
    this.queue = new PublishQueue(
      (sequence, data, part) => {
        this.check.sent(sequence, data, part);
        return publishStored(nc, this.messages.event(sequence, part), data, plan.timing);
      },
      { ...plan, partBytes: partBytesOf(nc) },
      () => {
        this.backpressure.update(this.queue.held);
        this.finishIfDone();
      },
      (err) => this.fail(err),
    );
    this.backpressure = new Backpressure(plan.flow, plan.highWaterBytes);
  }

  /** Writes `started`, and subscribes to the source. */
  start(source: Observable<T>): void {
    const started = this.messages.started();
    this.limits = readStreamLimits(this.nc, this.plan.layout);
    this.fence()
      .then((fence) =>
        publishStored(this.nc, this.messages.status('started', fence), encodeRecord(started), this.plan.timing),
      )
      .then((ack) => {
        this.startSequence = ack.seq;
        this.plan.onStarted?.(started, ack.seq);
        this.queue.open();
        this.finishIfDone();
        this.watchAge();
      })
      .catch((err: unknown) => this.refused(err));
    this.source = source.subscribe({
      next: (event) => this.next(event),
      error: (error: unknown) => this.end({ error, failed: true }),
      complete: () => this.end({ failed: false }),
    });
    // Stopped, or a limit met, while subscribing.
    if (this.stopped || this.ended) this.source.unsubscribe();
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
    this.stopping.abort();
    this.queue.close();
    this.stopWatchingAge();
    this.backpressure.release();
    this.source?.unsubscribe();
  }

  private next(event: T): void {
    if (this.stopped || this.ended) return;
    // Buffer.from takes small strings from Node's pooled slabs, where TextEncoder allocates a buffer each.
    const data = Buffer.from(toJsonl(event), 'utf8');
    this.runBytes += data.length;
    if (this.runBytes > this.plan.maxRunBytes)
      return this.limit(runTooLargeError(this.plan, this.plan.maxRunBytes, this.events + 1));
    this.events++;
    if (!this.queue.push(data)) {
      return this.fail(
        new BrokerError(
          `run ${this.plan.runId}: more than ${this.plan.maxBufferBytes} bytes of events await storage on ${serverOf(this.nc)}; the broker is not keeping up`,
        ),
      );
    }
    this.backpressure.update(this.queue.held);
    // Passed on as it passes: the run's own subscriber is not held back by the broker.
    this.subscriber.next(event);
  }

  private end(ending: Ending): void {
    if (this.ended) return;
    this.ended = ending;
    this.stopWatchingAge();
    this.finishIfDone();
  }

  /** A limit met: the source is stopped, and the run ends with `error` once what it has stored so far is. */
  private limit(error: StorageLimitError): void {
    if (this.stopped || this.ended) return;
    this.source?.unsubscribe();
    this.end({ error, failed: true });
  }

  /** Once the `started` record is stored: stops the run before the stream's `max_age` would remove that record. */
  private watchAge(): void {
    const startedAt = Date.now();
    void this.limits.then((read) => {
      if (!read || this.stopped || this.ended) return;
      this.stopWatchingAge = watchAge(read, () => this.limit(ageLimitError(this.plan, read, Date.now() - startedAt)));
    });
  }

  private finishIfDone(): void {
    if (this.stopped || this.finishing || !this.ended || this.startSequence === undefined || !this.queue.drained)
      return;
    this.finishing = true;
    const ending = this.ended;
    const record = this.messages.finished(ending, this.events, this.startSequence);
    const target = this.messages.status('finished', this.startSequence);
    // The end is written only once the stream holds every message sent.
    void this.check
      .complete(this.stopping.signal)
      .then(() => (this.stopped ? undefined : publishStored(this.nc, target, encodeRecord(record), this.plan.timing)))
      .then(
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
    const reason = noRoomReason(err);
    if (reason === undefined) return this.failed(err);
    const { eventsStream } = this.plan.layout;
    void this.limits.then((limits) => this.failed(streamFullError(this.plan, eventsStream, limits, reason, err)));
  }

  /** The run's end, once stopped by a failure: recorded as failed unless the record cannot be written. */
  private failed(error: unknown): void {
    if (this.startSequence === undefined || this.nc.isClosed()) return this.subscriber.error(error);
    // Only the events stored without a gap count (as acked, and as the check read them back): a consumer then
    // ends at the error, not at a hole.
    const stored = Math.min(this.queue.stored, this.check.storedWithoutGap);
    const record = this.messages.finished({ error, failed: true }, stored, this.startSequence);
    this.lastRecord(this.messages.status('finished', this.startSequence), record, error);
  }

  /** A status record was not stored: superseded (nothing more is written), its start removed, or the broker failed. */
  private refused(err: unknown): void {
    if (!(err instanceof StatusMovedError)) return this.fail(err);
    if (this.stopped) return;
    this.stop();
    void this.afterRefusal(err);
  }

  /**
   * The `finished` record was refused because the run's status moved: a newer
   * attempt started (this one is superseded), or this attempt's `started`
   * record is no longer in the stream. The run is then over, and its end is
   * recorded after whatever its status now holds, with the error that says so.
   */
  private async afterRefusal(err: StatusMovedError): Promise<void> {
    const { runId, attempt, layout } = this.plan;
    const latest = await readStatus(this.nc, layout, runId).catch(() => undefined);
    const record = latest?.record;
    const newer = record !== undefined && (record.record === 'dead-letter' || record.attempt > attempt);
    if (this.startSequence !== undefined && !newer && (await this.startRemoved(this.startSequence))) {
      const error = startRemovedError(this.plan, layout.eventsStream, await this.limits, this.startSequence);
      const finished = this.messages.finished({ error, failed: true }, this.queue.stored, this.startSequence);
      return this.lastRecord(
        this.messages.status('finished', latest?.sequence ?? 0, '.after-removal'),
        finished,
        error,
      );
    }
    const next = record && record.record !== 'dead-letter' ? record.attempt : attempt + 1;
    this.subscriber.error(new AttemptSupersededError(runId, attempt, Math.max(next, attempt + 1), { cause: err }));
  }

  /** Whether the stream no longer holds the message at `sequence` (a read that fails says nothing). */
  private async startRemoved(sequence: number): Promise<boolean> {
    const jsm = await clientsOf(this.nc).manager();
    return jsm.streams.getMessage(this.plan.layout.eventsStream, { seq: sequence }).then(
      (stored) => stored === null,
      () => false,
    );
  }

  /** Stores the record that ends a failed run, once and without retrying, then errors with `error`. */
  private lastRecord(target: PublishTarget, record: FinishedRecord, error: unknown): void {
    void publishStored(this.nc, target, encodeRecord(record), {
      ackTimeoutMs: this.plan.timing.ackTimeoutMs,
      retryForMs: 0,
    })
      .then(() => this.plan.onFinished?.(record))
      .catch(() => undefined)
      .finally(() => this.subscriber.error(error));
  }
}
