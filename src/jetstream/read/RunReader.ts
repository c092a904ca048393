import type { NatsConnection } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import type { Subscriber } from 'rxjs';
import type { FlowControl } from '../../common/FlowControl.js';
import { DecodeIssue } from '../../events/decode/decodeLine.js';
import { JsonlDecoder, type DecodeOptions } from '../../events/decode/JsonlDecoder.js';
import { SubscriberSink } from '../../events/decode/SubscriberSink.js';
import { DecodeError, EvoSciError } from '../../events/errors.js';
import type { EvoEvent, UnknownEvent } from '../../events/codecs.js';
import {
  AttemptSupersededError,
  BrokerError,
  brokerError,
  DeadLetterError,
  StorageLimitError,
} from '../wire/errors.js';
import { GapRecovery } from './GapRecovery.js';
import { OrderedReader, type FollowStart } from './OrderedReader.js';
import { ReadRetry } from './ReadRetry.js';
import type { ReaderSettings } from './readerSettings.js';
import type { JetStreamLayout } from '../wire/layout.js';
import { partOf } from '../wire/parts.js';
import { placeEvent, type EventPosition } from '../wire/positions.js';
import { decodeRecord, deserializeError, RunHeaders, type FinishedRecord } from '../wire/records.js';
import { ReorderBuffer, type InOrder, type Mismatch } from './ReorderBuffer.js';
import { readStatus } from './status.js';

/** One run to read, as `fromJetStream` was asked: its options checked and with their defaults. */
export interface ReadPlan extends Pick<DecodeOptions, 'strict' | 'onDiagnostic'> {
  readonly layout: JetStreamLayout;
  readonly runId: string;
  readonly after: EventPosition | undefined;
  readonly keepUnknown: boolean;
  readonly maxLineBytes: number;
  readonly maxHeldBytes: number;
  readonly settings: ReaderSettings;
  readonly flow: FlowControl | undefined;
}

const text = new TextDecoder();
/** The last token of an attempt's events subject. */
const ATTEMPT_TOKEN = /^[1-9][0-9]*$/;

/**
 * One subscription of `fromJetStream`: picks the attempt to follow from the
 * run's last status record, reads the run's subjects from that attempt's
 * start, puts its events back in order, decodes each with the decoder of
 * `fromJsonl` and ends at its `finished` record.
 */
export class RunReader {
  private following: OrderedReader | undefined;
  private gaps: GapRecovery | undefined;
  private done = false;
  /** The attempt being emitted; `undefined` until its `started` record is read. */
  private attempt: number | undefined;
  private readonly order: ReorderBuffer;
  private decoder: JsonlDecoder;
  private readonly runPrefix: string;
  /** The event being decoded: its sequence numbers the issues of its line. */
  private current: InOrder | undefined;
  /** Where decoded lines go, for the whole read: it stops once this reader is done. */
  private readonly sink: SubscriberSink;

  constructor(
    private readonly nc: NatsConnection,
    private readonly plan: ReadPlan,
    private readonly subscriber: Subscriber<EvoEvent | UnknownEvent>,
  ) {
    this.attempt = plan.after?.attempt;
    this.order = new ReorderBuffer(plan.after ? plan.after.sequence + 1 : 1);
    this.decoder = this.newDecoder();
    this.runPrefix = plan.layout.statusSubject(plan.runId).slice(0, -'status'.length);
    const isDone = () => this.done;
    const placed = {
      get closed() {
        return isDone();
      },
      next: (event: EvoEvent | UnknownEvent) => {
        const { sequence, resumeFrom } = this.current!;
        placeEvent(event, { runId: plan.runId, attempt: this.attempt!, sequence, resumeFrom });
        subscriber.next(event);
      },
    };
    const { strict, onDiagnostic } = plan;
    this.sink = new SubscriberSink(placed, {
      strict,
      onDiagnostic: onDiagnostic && ((issue: DecodeIssue) => onDiagnostic(this.numbered(issue))),
    });
  }

  private newDecoder(): JsonlDecoder {
    return new JsonlDecoder({ keepUnknown: this.plan.keepUnknown, maxLineBytes: this.plan.maxLineBytes });
  }

  start(): void {
    this.open().catch((err: unknown) =>
      this.end(EvoSciError.is(err) ? err : brokerError(this.nc, `could not read run ${this.plan.runId}`, err)),
    );
  }

  stop(): void {
    this.done = true;
    this.following?.stop();
  }

  private async open(): Promise<void> {
    const { nc, plan } = this;
    const { layout, runId, after } = plan;
    const status = await new ReadRetry(nc, plan.settings).call(
      `could not read the status of run ${runId} from stream ${layout.eventsStream}`,
      () => readStatus(nc, layout, runId),
      () => !this.done,
    );
    const last = status?.record;
    if (last?.record === 'dead-letter') throw new DeadLetterError(runId, last.reason, last.attempts);
    // Cancelled before any attempt started: no events to replay.
    if (last?.record === 'finished' && last.attempt === 0) throw failureOf(last);
    let start: FollowStart = { from: 'start' };
    if (after) {
      if (last && last.attempt > after.attempt) throw new AttemptSupersededError(runId, after.attempt, last.attempt);
      start = { from: 'sequence', sequence: after.resumeFrom };
    } else if (last?.record === 'started') {
      this.attempt = last.attempt;
      start = { from: 'sequence', sequence: status!.sequence };
    } else if (last?.record === 'finished') {
      this.attempt = last.attempt;
      start = { from: 'sequence', sequence: last.startSequence };
    }
    if (this.done) return;
    this.gaps = new GapRecovery(nc, layout.eventsStream, start, (error) => this.end(error));
    const target = {
      stream: layout.eventsStream,
      filter: layout.runSubjects(runId),
      onMessage: (message: JsMsg) => this.onMessage(message),
      onEnd: (error: Error) => this.end(error),
      flow: plan.flow,
    };
    this.following = OrderedReader.open(nc, target, start, plan.settings);
  }

  /** A gap in what was read, `what` saying what is missing: read again elsewhere, or the end. */
  private gap(what: string): void {
    if (this.following && !this.done) this.gaps!.found(this.following, what);
  }

  private onMessage(message: JsMsg): void {
    if (this.done) return;
    // An app callback (onDiagnostic) or a downstream operator that throws ends this subscription, not the app.
    try {
      const token = message.subject.slice(this.runPrefix.length);
      if (token === 'status') this.onStatus(message);
      else if (ATTEMPT_TOKEN.test(token)) this.onEvent(message, Number(token));
      // Any other subject of the run (its cancel, say) is not for readers: its end is in the status records.
    } catch (err) {
      this.end(err);
    }
  }

  private onEvent(message: JsMsg, eventAttempt: number): void {
    const { runId, layout } = this.plan;
    // Read from the run's start, an event before any started record: that record was removed.
    if (this.attempt === undefined) return this.gap(startGone(runId, eventAttempt, layout.eventsStream));
    // From another attempt (a worker thought dead): not ours.
    if (eventAttempt !== this.attempt) return;
    const sequence = Number(message.headers?.get(RunHeaders.sequence));
    if (!(Number.isInteger(sequence) && sequence >= 1)) {
      return this.report(
        new DecodeIssue(
          0,
          text.decode(message.data),
          `message ${message.seq} of stream ${layout.eventsStream} has no ${RunHeaders.sequence} header; dropped`,
        ),
      );
    }
    const part = partOf(message.headers?.get(RunHeaders.part));
    if (part === null) {
      return this.report(
        new DecodeIssue(
          sequence,
          text.decode(message.data.subarray(0, 256)),
          `message ${message.seq} of stream ${layout.eventsStream} has a malformed ${RunHeaders.part} header; dropped`,
        ),
      );
    }
    const added = this.order.add({
      sequence,
      part,
      data: message.data,
      size: messageBytes(message),
      streamSequence: message.seq,
    });
    if (added === 'repeat') return;
    if (added !== 'held') this.mismatched(added, message.data);
    for (let ready = this.order.take(); ready && !this.done; ready = this.order.take()) this.emit(ready);
    if (!this.done && this.order.bytes > this.plan.maxHeldBytes) {
      // A bound on memory: said at once, not read again.
      this.end(
        new BrokerError(
          `run ${runId} attempt ${this.attempt}: event ${this.order.next} is missing from stream ${layout.eventsStream} while ${this.order.size} later ones (${this.order.bytes} bytes, more than maxHeldBytes) arrived`,
        ),
      );
    }
  }

  /** An event whose messages disagree: reported, and its open line (if any) let go, so that no line joins two series. */
  private mismatched(mismatch: Mismatch, data: Uint8Array): void {
    if (mismatch.opened) this.decoder = this.newDecoder();
    this.report(new DecodeIssue(mismatch.sequence, text.decode(data.subarray(0, 256)), mismatch.message));
  }

  /**
   * Decodes one event's payload as a line of `fromJsonl`: bytes counted as
   * UTF-8, one strict/diagnostic rule. An event in parts is fed part by part
   * and ends with its last: the decoder holds at most `maxLineBytes` of it, as
   * it does of a long line from a CLI.
   */
  private emit(ready: InOrder): void {
    this.current = ready;
    this.sink.feed(this.decoder, ready.data);
    if (ready.part !== undefined && ready.part.index < ready.part.count) return;
    const fatal = this.sink.finish(this.decoder);
    if (fatal !== undefined) this.end(new DecodeError(this.numbered(fatal)));
  }

  /** An issue of the current event's line, numbered by the event's sequence. */
  private numbered(issue: DecodeIssue): DecodeIssue {
    return new DecodeIssue(this.current!.sequence, issue.raw, issue.message, issue.kept);
  }

  /** A message that is not an event: a diagnostic, or the end with `strict`. */
  private report(issue: DecodeIssue): void {
    if (this.plan.strict) return this.end(new DecodeError(issue));
    this.plan.onDiagnostic?.(issue);
  }

  private onStatus(message: JsMsg): void {
    const { runId, layout } = this.plan;
    const record = decodeRecord(message.data);
    if (!record) {
      const issue = new DecodeIssue(
        0,
        text.decode(message.data),
        `message ${message.seq} of stream ${layout.eventsStream} is not a status record; dropped`,
      );
      return this.report(issue);
    }
    if (record.record === 'dead-letter') return this.end(new DeadLetterError(runId, record.reason, record.attempts));
    if (record.record === 'started') {
      if (this.attempt === undefined) this.attempt = record.attempt;
      if (record.attempt === this.attempt) this.gaps?.started(message.seq);
      else if (record.attempt > this.attempt) this.end(new AttemptSupersededError(runId, this.attempt, record.attempt));
      return;
    }
    // Attempt 0: the run was cancelled before any attempt started, and none will.
    if (record.attempt === 0) return this.finished(record);
    if (this.attempt === undefined) return this.gap(startGone(runId, record.attempt, layout.eventsStream));
    // Records of an attempt below the one followed are a superseded worker's: ignored.
    if (record.attempt === this.attempt) this.finished(record);
  }

  private finished(record: FinishedRecord): void {
    const { runId, layout } = this.plan;
    const emitted = this.order.next - 1;
    // A run a limit stopped ends with the error that names it, even if that limit removed its first events.
    const limited = record.error?.class === StorageLimitError.prototype.name;
    // A run that failed while storing its events says how many were stored; later ones may be held.
    if (!limited && (emitted < record.events || (this.order.size > 0 && record.outcome === 'completed'))) {
      return this.gap(`run ${runId} attempt ${record.attempt}: ${missing(this.order, record, layout.eventsStream)}`);
    }
    this.end(record.outcome === 'completed' ? undefined : failureOf(record));
  }

  private end(error?: unknown): void {
    if (this.done) return;
    this.stop();
    if (error === undefined) this.subscriber.complete();
    else this.subscriber.error(error);
  }
}

/** What a reader at a finished record lacks, from which stream: the events (or parts) not there, and what came instead. */
function missing(order: ReorderBuffer, record: FinishedRecord, stream: string): string {
  const next = order.next;
  const held = order.heldRange();
  const later =
    held && `event${held.first === held.last ? ` ${held.first}` : `s ${held.first} to ${held.last}`}, then `;
  const came = `${next > 1 ? `after event ${next - 1} came` : 'instead came'} ${later ?? ''}the finished record (${record.events} events)`;
  const parts = order.partsOfNext();
  if (parts) {
    const absent = Array.from({ length: parts.count }, (_, i) => i + 1).filter((i) => !parts.seen.includes(i));
    return `event ${next} is missing part${absent.length > 1 ? 's' : ''} ${listed(absent)} of ${parts.count} from stream ${stream}: of its parts ${listed(parts.seen)} arrived; ${came}`;
  }
  const gap = held ? held.first - 1 : record.events;
  return `event${gap > next ? `s ${next} to ${gap} are` : ` ${next} is`} missing from stream ${stream}: ${came}`;
}

/** Numbers as runs: `1 to 3, 5`. */
function listed(numbers: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < numbers.length;) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    runs.push(j === i ? `${numbers[i]}` : `${numbers[i]} to ${numbers[j]}`);
    i = j + 1;
  }
  return runs.join(', ');
}

/** The version line and final blank line of a message's headers. */
const HEADER_FRAME_BYTES = 'NATS/1.0\r\n\r\n'.length;

/** What holding a message keeps of what the client read: its headers, subject and payload. */
function messageBytes(message: JsMsg): number {
  let bytes = message.data.length + message.subject.length + HEADER_FRAME_BYTES;
  // "Key: value\r\n" for each value; UTF-8 bytes, as they came.
  for (const [key, values] of message.headers ?? [])
    for (const value of values) bytes += Buffer.byteLength(key) + Buffer.byteLength(value) + 4;
  return bytes;
}

/** The error a failed run's `finished` record carries. */
function failureOf(record: FinishedRecord): EvoSciError {
  return record.error
    ? deserializeError(record.error, record.runId)
    : new BrokerError(`run ${record.runId} failed without an error in its record`);
}

/** What a run read from its start lacks when its attempt's `started` record is not in the stream. */
function startGone(runId: string, attempt: number, stream: string): string {
  return `run ${runId}: the started record of attempt ${attempt} is no longer in stream ${stream}, so the attempt cannot be read from its start`;
}
