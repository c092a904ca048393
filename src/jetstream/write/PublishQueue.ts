import type { Part } from '../wire/parts.js';
import { Fifo } from '../../common/Fifo.js';

/** How one message of an event is stored: the whole event (`part` undefined) or one part of it; resolves once the stream has it. */
export type StoreMessage = (sequence: number, data: Uint8Array, part: Part | undefined) => Promise<unknown>;

/** What a queue holds and sends at most. */
export interface QueueLimits {
  /** Messages awaiting their ack. */
  readonly maxPendingAcks: number;
  /** Bytes of messages awaiting their ack, past the first. */
  readonly maxPendingBytes: number;
  /** Bytes of events not yet stored, sent or not. */
  readonly maxBufferBytes: number;
  /** The most of an event one message carries: a longer one goes as parts. */
  readonly partBytes: number;
}

/** The event being sent in parts: how many, how long each, and how many are sent. */
interface Splitting {
  readonly count: number;
  sent: number;
}

/**
 * The events of one attempt on their way to the stream, in order: at most
 * `maxPendingAcks` messages (and `maxPendingBytes`, so that a large event's
 * parts do not queue on a slow link past their ack timeout) await their ack,
 * the rest wait behind them, and the bytes of both together stay within
 * `maxBufferBytes` (past that the caller fails the run). An event longer
 * than `partBytes` goes as parts; it is stored once every part is. Nothing
 * is sent before `open()`: the attempt's `started` record goes first.
 */
export class PublishQueue {
  /** Payloads not yet sent in full, in order. */
  private readonly waiting = new Fifo<Uint8Array>();
  /** The sequence of the oldest waiting payload. */
  private nextSequence = 1;
  /** The oldest waiting payload, while it is sent in parts. */
  private splitting: Splitting | undefined;
  /** Parts not yet stored, by the sequence of their event. */
  private readonly partsLeft = new Map<number, number>();
  private inFlight = 0;
  private inFlightBytes = 0;
  /** Every event up to this one is stored; `storedAbove` holds those stored past a gap. */
  private storedThrough = 0;
  private readonly storedAbove = new Set<number>();
  private bytes = 0;
  private opened = false;
  private closed = false;

  constructor(
    private readonly store: StoreMessage,
    private readonly limits: QueueLimits,
    /** After each ack; `fail` after the first message that could not be stored. */
    private readonly onStored: () => void,
    private readonly fail: (err: unknown) => void,
  ) {}

  /** How many events are stored with no gap before them. */
  get stored(): number {
    return this.storedThrough;
  }

  /** Bytes of events pushed and not yet stored. */
  get held(): number {
    return this.bytes;
  }

  /** Whether every event pushed is stored. */
  get drained(): boolean {
    return this.opened && this.inFlight === 0 && this.waiting.length === 0;
  }

  /** Queues one payload; `false` when the bytes held would pass `maxBufferBytes`. */
  push(data: Uint8Array): boolean {
    this.bytes += data.length;
    if (this.bytes > this.limits.maxBufferBytes) return false;
    this.waiting.push(data);
    this.pump();
    return true;
  }

  /** Starts sending. */
  open(): void {
    this.opened = true;
    this.pump();
  }

  /** Sends nothing more; acks still in flight are ignored. */
  close(): void {
    this.closed = true;
  }

  private pump(): void {
    const { maxPendingAcks, maxPendingBytes } = this.limits;
    while (
      !this.closed &&
      this.opened &&
      this.waiting.length > 0 &&
      this.inFlight < maxPendingAcks &&
      (this.inFlight === 0 || this.inFlightBytes < maxPendingBytes)
    ) {
      const data = this.waiting.peek()!;
      if (data.length <= this.limits.partBytes) {
        this.waiting.shift();
        this.send(this.nextSequence++, data, undefined);
      } else this.sendPart(data);
    }
  }

  /** The next part of the event at the head; the event leaves the queue with its last part. */
  private sendPart(data: Uint8Array): void {
    const size = this.limits.partBytes;
    const sequence = this.nextSequence;
    let splitting = this.splitting;
    if (!splitting) {
      splitting = this.splitting = { count: Math.ceil(data.length / size), sent: 0 };
      this.partsLeft.set(sequence, splitting.count);
    }
    const start = splitting.sent * size;
    const part = { index: ++splitting.sent, count: splitting.count };
    if (splitting.sent === splitting.count) {
      this.splitting = undefined;
      this.waiting.shift();
      this.nextSequence++;
    }
    // A view, not a copy: the event's buffer is held until its last part is stored.
    this.send(sequence, data.subarray(start, start + size), part);
  }

  private send(sequence: number, data: Uint8Array, part: Part | undefined): void {
    this.inFlight++;
    this.inFlightBytes += data.length;
    this.store(sequence, data, part).then(() => this.acked(sequence, data.length, part !== undefined), this.fail);
  }

  private acked(sequence: number, length: number, isPart: boolean): void {
    this.inFlight--;
    this.inFlightBytes -= length;
    this.bytes -= length;
    if (!isPart || this.lastPartStored(sequence)) {
      this.storedAbove.add(sequence);
      while (this.storedAbove.delete(this.storedThrough + 1)) this.storedThrough++;
    }
    if (this.closed) return;
    this.pump();
    this.onStored();
  }

  /** One more part of the event is stored: whether it was the last one left. */
  private lastPartStored(sequence: number): boolean {
    const left = this.partsLeft.get(sequence)! - 1;
    if (left > 0) this.partsLeft.set(sequence, left);
    else this.partsLeft.delete(sequence);
    return left === 0;
  }
}
