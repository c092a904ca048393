/** An event ready to emit: its place in its attempt, its payload, and where to read again after it. */
export interface InOrder {
  readonly sequence: number;
  readonly data: Uint8Array;
  /** The stream sequence from which a new reader misses nothing after this event. */
  readonly resumeFrom: number;
}

interface Held {
  readonly data: Uint8Array;
  readonly streamSequence: number;
}

/**
 * The events of one attempt put back in order by their `EvoSci-Seq`: a
 * repeat is dropped, and one stored ahead of a missing one (after a publish
 * retried across a broker restart) is held until its turn. What is held is
 * counted in bytes, so that the caller can bound it.
 */
export class ReorderBuffer {
  private readonly held = new Map<number, Held>();
  private heldBytes = 0;
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

  /** Bytes of events held ahead of a missing one. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** How many events are held ahead of a missing one. */
  get size(): number {
    return this.held.size;
  }

  /** Takes one event as read; `false` for a repeat. */
  add(sequence: number, data: Uint8Array, streamSequence: number): boolean {
    if (sequence < this.expected || this.held.has(sequence)) return false;
    this.held.set(sequence, { data, streamSequence });
    this.heldBytes += data.length;
    this.lastRead = Math.max(this.lastRead, streamSequence);
    return true;
  }

  /** The next event in order, if it has arrived. */
  take(): InOrder | undefined {
    const item = this.held.get(this.expected);
    if (item === undefined) return undefined;
    this.held.delete(this.expected);
    this.heldBytes -= item.data.length;
    const sequence = this.expected++;
    return { sequence, data: item.data, resumeFrom: this.held.size === 0 ? this.lastRead + 1 : this.lowestHeld() };
  }

  private lowestHeld(): number {
    let lowest = Infinity;
    for (const { streamSequence } of this.held.values()) lowest = Math.min(lowest, streamSequence);
    return lowest;
  }
}
