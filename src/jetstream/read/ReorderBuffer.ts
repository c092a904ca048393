import type { Part } from '../wire/parts.js';

/** A message ready to decode: its event's place in its attempt, which part of the event it is, its payload, and where to read again after it. */
export interface InOrder {
  readonly sequence: number;
  /** `undefined` for an event sent whole; else the event's line goes on until its last part. */
  readonly part: Part | undefined;
  readonly data: Uint8Array;
  /** The stream sequence from which a new reader misses nothing after this message's event. */
  readonly resumeFrom: number;
  /** The stream sequence of this message. */
  readonly streamSequence: number;
}

/** A message of an attempt as read: its event, which part of it, its payload, and the bytes it came in. */
export interface Arrival {
  readonly sequence: number;
  readonly part: Part | undefined;
  readonly data: Uint8Array;
  /** Its headers, subject and payload: what holding it keeps of what the client read. */
  readonly size: number;
  readonly streamSequence: number;
}

/** An event whose messages disagree on its shape (whole, or so many parts): it is dropped, never joined. */
export interface Mismatch {
  readonly sequence: number;
  /** What was seen of the event, and what came instead. */
  readonly message: string;
  /** Parts of it were already taken: its line is open in the decoder, which must let it go. */
  readonly opened: boolean;
}

/** What `add` made of a message: held until its turn, a repeat dropped, or the end of an event whose messages disagree. */
export type Added = 'held' | 'repeat' | Mismatch;

interface Held {
  readonly data: Uint8Array;
  readonly size: number;
  readonly streamSequence: number;
  readonly part: Part | undefined;
}

/** An event's shape: 0 sent whole, else its count of parts; `BROKEN` dropped for a mismatch. */
const WHOLE = 0;
const BROKEN = -1;
/** Shapes of events already passed that are remembered, to tell a repeat from a message that disagrees with one. */
const REMEMBERED = 1024;

const shown = (shape: number, part?: Part): string =>
  part ? `part ${part.index}/${part.count}` : shape === WHOLE ? 'a whole event' : `${shape} parts`;

/**
 * The messages of one attempt put back in order by their `EvoSci-Seq`, and
 * the parts of an event by their `EvoSci-Part`: a repeat is dropped, and one
 * stored ahead of a missing one (after a publish retried across a broker
 * restart) is held until its turn. Every message of an event must agree on
 * its shape (whole, or one count of parts): one that does not drops the event
 * with a `Mismatch`, so that no line is joined from two series. What is held
 * is counted in the bytes it keeps, so that the caller can bound it.
 */
export class ReorderBuffer {
  /** Events sent whole, by sequence. */
  private readonly held = new Map<number, Held>();
  /** Parts of events sent in parts, by sequence, then by part. */
  private readonly heldParts = new Map<number, { readonly count: number; readonly parts: Map<number, Held> }>();
  private heldBytes = 0;
  private heldCount = 0;
  /** The part of event `expected` to emit next: above 1 while an event is taken part by part. */
  private expectedPart = 1;
  /** The count of parts of the event being taken part by part. */
  private takingCount = 0;
  /** Events not yet reached that were dropped for a mismatch. */
  private readonly broken = new Set<number>();
  /** The shapes of the last events passed, oldest first. */
  private readonly passed = new Map<number, number>();
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

  /** Bytes that the messages held ahead of a missing one keep. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** How many messages are held ahead of a missing one. */
  get size(): number {
    return this.heldCount;
  }

  /** Takes one message as read. */
  add(arrival: Arrival): Added {
    const { sequence, part } = arrival;
    const shape = part?.count ?? WHOLE;
    if (sequence < this.expected) {
      const known = this.passed.get(sequence);
      if (known === undefined || known === shape || known === BROKEN) return 'repeat';
      return {
        sequence,
        message: `${this.disagreement(sequence, known, arrival)}; the event was read, this message is dropped`,
        opened: false,
      };
    }
    if (this.broken.has(sequence)) return 'repeat';
    const known = this.shapeOf(sequence);
    if (known !== undefined && known !== shape)
      return this.drop(sequence, `${this.disagreement(sequence, known, arrival)}; the event is dropped`);
    if (part === undefined) {
      if (this.held.has(sequence)) return 'repeat';
      this.held.set(sequence, this.kept(arrival));
    } else {
      if (sequence === this.expected && part.index < this.expectedPart) return 'repeat';
      let series = this.heldParts.get(sequence);
      if (series?.parts.has(part.index)) return 'repeat';
      if (!series) this.heldParts.set(sequence, (series = { count: part.count, parts: new Map<number, Held>() }));
      series.parts.set(part.index, this.kept(arrival));
    }
    this.heldBytes += arrival.size;
    this.heldCount++;
    this.lastRead = Math.max(this.lastRead, arrival.streamSequence);
    return 'held';
  }

  /** The next message in order, if it has arrived. */
  take(): InOrder | undefined {
    while (this.broken.delete(this.expected)) this.pass(BROKEN);
    const sequence = this.expected;
    const item = this.expectedPart === 1 ? this.held.get(sequence) : undefined;
    if (item !== undefined) {
      this.held.delete(sequence);
      return this.taken(item, sequence);
    }
    const series = this.heldParts.get(sequence);
    const part = series?.parts.get(this.expectedPart);
    if (part === undefined) return undefined;
    series!.parts.delete(this.expectedPart);
    if (series!.parts.size === 0) this.heldParts.delete(sequence);
    return this.taken(part, sequence);
  }

  /** What arrived of the next event to emit: the parts seen (taken or held) and their count, if it came in parts. */
  partsOfNext(): { readonly seen: number[]; readonly count: number } | undefined {
    const series = this.heldParts.get(this.expected);
    const count = this.expectedPart > 1 ? this.takingCount : series?.count;
    if (count === undefined) return undefined;
    const taken = Array.from({ length: this.expectedPart - 1 }, (_, i) => i + 1);
    return { seen: [...taken, ...[...(series?.parts.keys() ?? [])].sort((a, b) => a - b)], count };
  }

  /** The lowest and highest events held ahead of the next one, if any. */
  heldRange(): { readonly first: number; readonly last: number } | undefined {
    const later = [...this.held.keys(), ...this.heldParts.keys()].filter((s) => s > this.expected);
    return later.length === 0 ? undefined : { first: Math.min(...later), last: Math.max(...later) };
  }

  /** The shape of an event not yet passed, as far as its messages so far say. */
  private shapeOf(sequence: number): number | undefined {
    if (sequence === this.expected && this.expectedPart > 1) return this.takingCount;
    if (this.held.has(sequence)) return WHOLE;
    return this.heldParts.get(sequence)?.count;
  }

  private disagreement(sequence: number, known: number, arrival: Arrival): string {
    return `event ${sequence} came as ${shown(known)}, then as ${shown(WHOLE, arrival.part)} (message ${arrival.streamSequence}): its messages disagree`;
  }

  /** Drops an event whose messages disagree: what is held of it, and the event itself when its turn comes. */
  private drop(sequence: number, message: string): Mismatch {
    const whole = this.held.get(sequence);
    if (whole) this.release(whole);
    this.held.delete(sequence);
    for (const part of this.heldParts.get(sequence)?.parts.values() ?? []) this.release(part);
    this.heldParts.delete(sequence);
    const opened = sequence === this.expected && this.expectedPart > 1;
    if (sequence === this.expected) this.pass(BROKEN);
    else this.broken.add(sequence);
    return { sequence, message, opened };
  }

  private release(item: Held): void {
    this.heldBytes -= item.size;
    this.heldCount--;
  }

  /** Moves on to the next event, remembering the shape of the one passed. */
  private pass(shape: number): void {
    this.passed.set(this.expected, shape);
    if (this.passed.size > REMEMBERED) this.passed.delete(this.passed.keys().next().value!);
    this.expected++;
    this.expectedPart = 1;
    this.takingCount = 0;
  }

  /**
   * What holding a message keeps: its payload as read, or a copy of it when
   * the payload is a view into a larger read (several messages, or this one's
   * headers), so that what is held is never more than what is counted.
   */
  private kept(arrival: Arrival): Held {
    const { data, size, streamSequence, part } = arrival;
    const next = arrival.sequence === this.expected && (part?.index ?? 1) === this.expectedPart;
    const own = next || data.buffer.byteLength <= size ? data : data.slice();
    return { data: own, size, streamSequence, part };
  }

  private taken(item: Held, sequence: number): InOrder {
    this.release(item);
    if (item.part === undefined) this.pass(WHOLE);
    else if (item.part.index >= item.part.count) this.pass(item.part.count);
    else {
      this.takingCount = item.part.count;
      this.expectedPart++;
    }
    const resumeFrom = this.heldCount === 0 ? this.lastRead + 1 : this.lowestHeld();
    return { sequence, part: item.part, data: item.data, resumeFrom, streamSequence: item.streamSequence };
  }

  private lowestHeld(): number {
    let lowest = Infinity;
    for (const { streamSequence } of this.held.values()) lowest = Math.min(lowest, streamSequence);
    for (const { parts } of this.heldParts.values())
      for (const { streamSequence } of parts.values()) lowest = Math.min(lowest, streamSequence);
    return lowest;
  }
}
