import type { NatsConnection } from '@nats-io/transport-node';
import type { Consumer } from '@nats-io/jetstream';
import { RunHeaders } from '../wire/records.js';
import { BrokerError } from '../wire/errors.js';
import { clientsOf } from '../wire/clients.js';
import { partOf, type Part } from '../wire/parts.js';
import type { AttemptMessages } from './AttemptMessages.js';
import { publishStored, type PublishTiming } from './publishStored.js';
import { retried } from '../wire/backoff.js';
import { Fifo } from '../../common/Fifo.js';

/** A message of the attempt kept to be sent again: its payload and which part of its event it is. */
interface Kept {
  readonly sequence: number;
  readonly data: Uint8Array;
  readonly part: Part | undefined;
}

/** The key of one message of an attempt: its event, and its part if it is one. */
const keyOf = (sequence: number, part: Part | undefined): string =>
  part === undefined ? `${sequence}` : `${sequence}.${part.index}`;

/**
 * Messages of an attempt whose payloads are kept after their ack, at most:
 * a window, not the whole run, which would keep every event alive and cost
 * the writer's garbage collector more than the rest of its path.
 */
const KEPT_MESSAGES = 256;

/** How many rounds of sending missing messages again before the attempt gives up. */
const ROUNDS = 3;

/**
 * Messages read back in one fetch: a page, so that each fetch of a large
 * attempt (headers only) ends well within its expiry rather than at it.
 */
const READ_PAGE = 10_000;

/** The least expiry the client takes for a fetch. */
const MIN_EXPIRES_MS = 1000;

/**
 * What one attempt sent to its events subject, checked against the stream
 * before its `finished` record is written: a run's end is written only once
 * its events are all stored. An ack is the stream's word, but a leader change
 * can lose what a leader acknowledged, and an id the old leader still holds
 * as "in process" would make a re-send under it a duplicate of nothing. So
 * the subject's count of messages (the leader's) is compared with what was
 * sent; when it differs, the subject is read back (a page at a time, until
 * nothing is pending) and each message missing from it is sent again under a
 * fresh `Nats-Msg-Id` (a reader drops a copy of an event it already has).
 * After a re-send, the events read back decide, not the count, which a
 * duplicate can make up. The payloads of the last 256 messages sent (and at
 * most `maxKeptBytes`) are kept for that; a message missing from before them
 * fails the attempt with a `BrokerError` that names it, rather than end it
 * with a hole (its failed `finished` record counts the events before the
 * first missing one, `storedWithoutGap`).
 */
export class StoredCheck {
  /** The count of parts (0: sent whole) of each event sent, by sequence. */
  private readonly shapes: number[] = [];
  private count = 0;
  /** The last messages sent, oldest first: a queue, not a map, on the path of every publish. */
  private readonly kept = new Fifo<Kept>();
  private keptBytes = 0;
  private round = 0;
  /** The first event the last read-back found missing: the attempt's events are whole only before it. */
  private firstMissing = Infinity;

  constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
    private readonly messages: AttemptMessages,
    private readonly timing: PublishTiming,
    private readonly maxKeptBytes: number,
    /** Messages asked for in each fetch of the read-back. */
    private readonly pageSize = READ_PAGE,
  ) {}

  /** A message of the attempt is sent: counted, and its payload kept while it is among the last ones. */
  sent(sequence: number, data: Uint8Array, part: Part | undefined): void {
    this.count++;
    this.shapes[sequence] = part?.count ?? 0;
    this.kept.push({ sequence, data, part });
    this.keptBytes += data.length;
    while (this.keptBytes > this.maxKeptBytes || this.kept.length > KEPT_MESSAGES)
      this.keptBytes -= this.kept.shift()!.data.length;
  }

  /**
   * Resolves once the stream holds every message sent; fails with a
   * `BrokerError` if some cannot be sent again, and with `stop`'s reason once
   * it is aborted (checked between steps: nothing is sent again after it).
   */
  async complete(stop?: AbortSignal): Promise<void> {
    // Asked again through an election, as a publish is.
    const until = Date.now() + this.timing.retryForMs;
    const asked = async <R>(call: () => Promise<R>): Promise<R> => {
      stop?.throwIfAborted();
      const answer = await retried(this.nc, call, until);
      stop?.throwIfAborted();
      return answer;
    };
    for (;;) {
      if (this.count === 0) return;
      // The count alone decides only an exact match before any re-send: a
      // duplicate (a re-send and its late original both stored) can make up for a hole.
      if (this.round === 0 && (await asked(() => this.storedCount())) === this.count) return;
      const missing = this.missing(await asked(() => this.storedKeys(stop)));
      if (missing.length === 0) return;
      if (++this.round > ROUNDS)
        throw new BrokerError(`${this.subject}: messages still missing after ${ROUNDS} rounds of sending them again`);
      await this.sendAgain(missing);
    }
  }

  /**
   * Events from the first stored with none missing, as the last read-back
   * found them (`Infinity` until one is found missing): what the `finished`
   * record of an attempt the check failed counts, so that a reader ends at
   * its error rather than at a hole.
   */
  get storedWithoutGap(): number {
    return this.firstMissing - 1;
  }

  private get subject(): string {
    return this.messages.event(1, undefined).subject;
  }

  /** The count of messages on the attempt's subject, as the stream's leader answers. */
  private async storedCount(): Promise<number> {
    const jsm = await clientsOf(this.nc).manager();
    const info = await jsm.streams.info(this.stream, { subjects_filter: this.subject });
    return info.state.subjects?.[this.subject] ?? 0;
  }

  /** The distinct messages on the attempt's subject, read back (headers only) page by page until none is pending. */
  private async storedKeys(stop: AbortSignal | undefined): Promise<Set<string>> {
    const found = new Set<string>();
    if ((await this.storedCount()) === 0) return found;
    const consumer = await clientsOf(this.nc).js.consumers.get(this.stream, {
      filter_subjects: this.subject,
      headers_only: true,
    });
    try {
      // Stopped: what was read is dropped by the caller, not asked for again.
      for (let pending = 1; pending > 0 && !stop?.aborted;) pending = await this.readPage(consumer, found);
    } finally {
      await consumer.delete().catch(() => undefined);
    }
    return found;
  }

  /**
   * One fetch of the read-back, its keys added to `found`; how many messages
   * are pending after it. A fetch that brings nothing ended before the
   * subject's last message: an error that `retried` asks again, since taking
   * the messages not read for missing would send them again, or fail the attempt.
   */
  private async readPage(consumer: Consumer, found: Set<string>): Promise<number> {
    const expires = Math.max(MIN_EXPIRES_MS, this.timing.ackTimeoutMs);
    const read = await consumer.fetch({ max_messages: this.pageSize, expires });
    let pending: number | undefined;
    for await (const m of read) {
      const part = partOf(m.headers?.get(RunHeaders.part));
      if (part !== null) found.add(keyOf(Number(m.headers?.get(RunHeaders.sequence)), part));
      pending = m.info.pending;
      if (pending === 0) break;
    }
    if (pending === undefined)
      throw new BrokerError(`${this.subject}: reading stream ${this.stream} back ended before its last message`);
    return pending;
  }

  /** Each message sent that `stored` lacks; a `BrokerError` if one is no longer kept to be sent again. */
  private missing(stored: ReadonlySet<string>): Kept[] {
    const kept = new Map(this.kept.toArray().map((k) => [keyOf(k.sequence, k.part), k]));
    const missing: Kept[] = [];
    this.firstMissing = Infinity;
    for (const [sequence, count] of this.shapes.entries()) {
      if (count === undefined) continue;
      const parts = count === 0 ? [undefined] : Array.from({ length: count }, (_, i) => ({ index: i + 1, count }));
      for (const part of parts) {
        const key = keyOf(sequence, part);
        if (stored.has(key)) continue;
        this.firstMissing = Math.min(this.firstMissing, sequence);
        const message = kept.get(key);
        if (!message)
          throw new BrokerError(
            `event ${sequence} is missing from ${this.subject} in stream ${this.stream}, and is no longer held to be sent again`,
          );
        missing.push(message);
      }
    }
    return missing;
  }

  /** Sends `missing` again, under fresh ids: `<id>.again<round>`. */
  private async sendAgain(missing: readonly Kept[]): Promise<void> {
    await Promise.all(
      missing.map(({ sequence, part, data }) => {
        const target = this.messages.event(sequence, part);
        return publishStored(this.nc, { ...target, msgID: `${target.msgID}.again${this.round}` }, data, this.timing);
      }),
    );
  }
}
