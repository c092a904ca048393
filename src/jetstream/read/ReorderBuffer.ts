import type { Part } from '../wire/parts.js';

/** A message ready to decode: its event's place in its attempt, which part of the event it is, its payload, and where to read again after it. */
export interface InOrder {
  readonly sequence: number;
  /** `undefined` for an event sent whole; else the event's line goes on until its last part. */
  readonly part: Part | undefined;
  readonly data: Uint8Array;
  /** The stream sequence from which a new reader misses nothing after this message's event. */
  readonly resumeFrom: number;
}

interface Held {
  readonly data: Uint8Array;
  readonly streamSequence: number;
  readonly part: Part | undefined;
}

/**
 * The messages of one attempt put back in order by their `EvoSci-Seq`, and
 * the parts of an event by their `EvoSci-Part`: a repeat is dropped, and one
 * stored ahead of a missing one (after a publish retried across a broker
 * restart) is held until its turn. What is held is counted in bytes, so that
 * the caller can bound it.
 */
export class ReorderBuffer {
  /** Events sent whole, by sequence. */
  private readonly held = new Map<number, Held>();
  /** Parts of events sent in parts, by sequence, then by part. */
  private readonly heldParts = new Map<number, Map<number, Held>>();
  private heldBytes = 0;
  private heldCount = 0;
  /** The part of event `expected` to emit next: above 1 while an event is taken part by part. */
  private expectedPart = 1;
  /** The highest stream sequence added. */
  private lastRead = 0;

  constructor(
    /** The sequence of the next event to emit. */
    private expected: number,
  ) {}

  /** The sequence of the next event to emit. */
  get next(): number {
    return this.expected;
  }

  /** Bytes of messages held ahead of a missing one. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** How many messages are held ahead of a missing one. */
  get size(): number {
    return this.heldCount;
  }

  /** Takes one message as read; `false` for a repeat (or a part of an event already read otherwise). */
  add(sequence: number, data: Uint8Array, streamSequence: number, part?: Part): boolean {
    if (sequence < this.expected) return false;
    if (part === undefined) {
      if (this.held.has(sequence) || this.heldParts.has(sequence)) return false;
      if (sequence === this.expected && this.expectedPart > 1) return false;
      this.held.set(sequence, { data, streamSequence, part });
    } else {
      if (this.held.has(sequence) || (sequence === this.expected && part.index < this.expectedPart)) return false;
      let parts = this.heldParts.get(sequence);
      if (parts?.has(part.index)) return false;
      if (!parts) this.heldParts.set(sequence, (parts = new Map<number, Held>()));
      parts.set(part.index, { data, streamSequence, part });
    }
    this.heldBytes += data.length;
    this.heldCount++;
    this.lastRead = Math.max(this.lastRead, streamSequence);
    return true;
  }

  /** The next message in order, if it has arrived. */
  take(): InOrder | undefined {
    const sequence = this.expected;
    const item = this.expectedPart === 1 ? this.held.get(sequence) : undefined;
    if (item !== undefined) {
      this.held.delete(sequence);
      return this.taken(item, sequence);
    }
    const parts = this.heldParts.get(sequence);
    const part = parts?.get(this.expectedPart);
    if (part === undefined) return undefined;
    parts!.delete(this.expectedPart);
    if (parts!.size === 0) this.heldParts.delete(sequence);
    return this.taken(part, sequence);
  }

  private taken(item: Held, sequence: number): InOrder {
    this.heldBytes -= item.data.length;
    this.heldCount--;
    if (item.part === undefined || item.part.index >= item.part.count) {
      this.expected++;
      this.expectedPart = 1;
    } else this.expectedPart++;
    const resumeFrom = this.heldCount === 0 ? this.lastRead + 1 : this.lowestHeld();
    return { sequence, part: item.part, data: item.data, resumeFrom };
  }

  private lowestHeld(): number {
    let lowest = Infinity;
    for (const { streamSequence } of this.held.values()) lowest = Math.min(lowest, streamSequence);
    for (const parts of this.heldParts.values())
      for (const { streamSequence } of parts.values()) lowest = Math.min(lowest, streamSequence);
    return lowest;
  }
}
