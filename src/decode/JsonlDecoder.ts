import { DecodeIssue } from '../errors.js';
import type { EvoEvent, UnknownEvent } from '../events.js';
import { decodeLine } from './decodeLine.js';

const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;

/** How lines become events; shared by `fromJsonl` and `run`. */
export interface DecodeOptions {
  /**
   * Called for each line that does not decode, and (with `kept: true`) for a
   * line whose event lost digits of an integer beyond ±2^53; the stream goes on.
   */
  readonly onDiagnostic?: (issue: DecodeIssue) => void;
  /** Make the first bad line an error of the Observable (a `DecodeError`) instead of a diagnostic; `kept` notes stay notes. */
  readonly strict?: boolean;
  /** Pass events of a `type` this library does not know as `UnknownEvent` instead of skipping them. */
  readonly keepUnknown?: boolean;
  /**
   * Longest line accepted, in UTF-8 bytes (default 64 MiB). A longer line is
   * reported and dropped, and no more than this is held while reading it.
   */
  readonly maxLineBytes?: number;
}

/**
 * The decode options with their defaults; a wrong value is a `TypeError`
 * naming the option. Called once per `fromJsonl` or `run` call, where the
 * mistake is; the decoder trusts what it is given.
 */
export function checkDecodeOptions(options: DecodeOptions): { readonly maxLineBytes: number } {
  const { maxLineBytes = DEFAULT_MAX_LINE_BYTES } = options;
  if (!(typeof maxLineBytes === 'number' && maxLineBytes >= 1)) {
    throw new TypeError(`maxLineBytes must be a number of bytes ≥ 1, got ${String(maxLineBytes)}`);
  }
  return { maxLineBytes };
}

/** What decoding a chunk completed, in stream order: events, and issues for the lines that did not decode. */
export type Decoded = EvoEvent | UnknownEvent | DecodeIssue;

/** Bytes decoded per `TextDecoder` call: small strings stay on V8's fast path and out of the GC's way. */
const BATCH_BYTES = 64 * 1024;
const LF = '\n';
const LF_BYTE = 0x0a;
const CR = 13;
const BOM = '\ufeff';
/** How much of an oversized line its diagnostic keeps. */
const HEAD_LENGTH = 1024;

const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;

/** Size of the blocks small pieces are gathered in. */
const BLOCK = 64 * 1024;

/**
 * The bytes of the line still open at the end of a chunk. Pieces of a block's
 * size or more are kept as they came (copied: a source may reuse its buffer);
 * smaller ones are gathered into blocks, so that a line that arrives a byte at
 * a time costs its size, not an object per chunk. Text pieces are held as
 * their UTF-8 (a high surrogate at the end of a piece waits for its pair), so
 * the whole line is decoded once.
 */
class HeldLine {
  private blocks: Uint8Array[] = [];
  private block = new Uint8Array(0);
  private used = 0;
  private size = 0;
  private readonly utf8 = new TextEncoder();
  /** A high surrogate that ended the last text piece. */
  private carry = '';

  /** Bytes held, the carried surrogate counted as the 3 it would take alone. */
  get length(): number {
    return this.size + (this.carry ? 3 : 0);
  }

  bytes(piece: Uint8Array): void {
    this.flushCarry();
    if (piece.length >= BLOCK) {
      this.seal();
      this.blocks.push(Uint8Array.prototype.slice.call(piece));
    } else {
      if (this.used + piece.length > this.block.length) this.fresh(piece.length);
      this.block.set(piece, this.used);
      this.used += piece.length;
    }
    this.size += piece.length;
  }

  text(piece: string): void {
    let text = this.carry + piece;
    this.carry = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= HIGH_SURROGATE_FIRST && last <= HIGH_SURROGATE_LAST) {
      this.carry = text.slice(-1);
      text = text.slice(0, -1);
    }
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (text.length * 3 >= BLOCK) {
      const encoded = this.utf8.encode(text);
      this.seal();
      this.blocks.push(encoded);
      this.size += encoded.length;
      return;
    }
    if (this.used + text.length * 3 > this.block.length) this.fresh(text.length * 3);
    const { written } = this.utf8.encodeInto(text, this.block.subarray(this.used));
    this.used += written;
    this.size += written;
  }

  /** The held line as text, up to `limit` bytes of it. */
  decode(decoder: { decode(bytes: Uint8Array): string }, limit = Infinity): string {
    this.flushCarry();
    this.seal();
    const take = Math.min(this.size, limit);
    if (this.blocks.length === 1) return decoder.decode(this.blocks[0]!.subarray(0, take));
    const joined = new Uint8Array(take);
    let at = 0;
    for (const block of this.blocks) {
      if (at >= take) break;
      const part = block.subarray(0, take - at);
      joined.set(part, at);
      at += part.length;
    }
    return decoder.decode(joined);
  }

  clear(): void {
    this.blocks = [];
    this.block = new Uint8Array(0);
    this.used = 0;
    this.size = 0;
    this.carry = '';
  }

  private flushCarry(): void {
    if (!this.carry) return;
    const carried = this.carry;
    this.carry = '';
    this.text(carried);
  }

  /** Closes the block being filled, keeping only its used bytes. */
  private seal(): void {
    if (this.used === 0) return;
    this.blocks.push(this.block.subarray(0, this.used));
    this.block = new Uint8Array(0);
    this.used = 0;
  }

  private fresh(atLeast: number): void {
    this.seal();
    this.block = new Uint8Array(Math.max(BLOCK, atLeast));
  }
}

/** UTF-8 length of a string, counted only for lines long enough to be near the limit. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Incremental JSONL decoder: feed it chunks of bytes or text split anywhere;
 * each `write` returns the events and issues of the lines that chunk
 * completed. The array is reused by the next call: read it first.
 *
 * Byte chunks are cut at the newline byte before they are decoded (a newline
 * byte is never part of a multi-byte UTF-8 character), and whole lines are
 * decoded some 64 KiB at a time: a streaming `TextDecoder` would leave
 * Node's fast ASCII path and allocate a UTF-16 copy of every chunk. The text
 * is then cut at `\n`; slices go to `JSON.parse` without copying. Only a line
 * that spans chunks is held, in one growing buffer of its bytes, and decoded
 * once when it ends; a line over `maxLineBytes` is counted but no longer kept.
 */
export class JsonlDecoder {
  private readonly utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly maxLineBytes: number;
  private readonly keepUnknown: boolean;
  /** The line still open at the end of the last chunk. */
  private readonly held = new HeldLine();
  /** The open line passed the limit: its text is dropped until its end. */
  private oversized = false;
  private oversizedHead = '';
  private lineNumber = 0;
  private readonly out: Decoded[] = [];
  private readonly note = (issue: DecodeIssue): void => void this.out.push(issue);

  /** `options` as `checkDecodeOptions` accepted them: they are not checked again for each subscription. */
  constructor(options: Pick<DecodeOptions, 'keepUnknown' | 'maxLineBytes'> = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.keepUnknown = options.keepUnknown ?? false;
  }

  /** The open line: what was received after the last newline (its start only, if oversized). */
  get partialLine(): string {
    return this.oversized ? this.oversizedHead : this.held.decode(this.utf8);
  }

  /** Feeds one chunk; returns what it completed. */
  write(chunk: Uint8Array | string): readonly Decoded[] {
    this.out.length = 0;
    if (typeof chunk === 'string') this.text(chunk);
    else this.bytes(chunk);
    return this.out;
  }

  /** End of input: returns the final line, if it had no newline. */
  end(): readonly Decoded[] {
    this.out.length = 0;
    if (this.lineOpen) this.finishLine('');
    return this.out;
  }

  /** Whether a line was started and not yet ended. */
  private get lineOpen(): boolean {
    return this.held.length > 0 || this.oversized;
  }

  private bytes(chunk: Uint8Array): void {
    let start = 0;
    if (this.lineOpen) {
      const end = chunk.indexOf(LF_BYTE);
      if (end === -1) return this.hold(chunk);
      this.finishLine(chunk.subarray(0, end));
      start = end + 1;
    }
    while (start < chunk.length) {
      let cut =
        chunk.length - start > BATCH_BYTES
          ? chunk.lastIndexOf(LF_BYTE, start + BATCH_BYTES - 1)
          : chunk.lastIndexOf(LF_BYTE);
      // A single line longer than a batch: decode up to its end.
      if (cut < start) cut = chunk.indexOf(LF_BYTE, start + BATCH_BYTES);
      if (cut === -1) break;
      this.text(this.utf8.decode(chunk.subarray(start, cut + 1)));
      start = cut + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  private text(chunk: string): void {
    let start = 0;
    let end = chunk.indexOf(LF);
    if (end !== -1 && this.lineOpen) {
      this.finishLine(chunk.slice(0, end));
      start = end + 1;
      end = chunk.indexOf(LF, start);
    }
    while (end !== -1) {
      this.line(chunk.slice(start, end));
      start = end + 1;
      end = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.hold(start === 0 ? chunk : chunk.slice(start));
  }

  /** Holds the start of a line; the source may reuse its buffer, so bytes are copied. */
  private hold(piece: string | Uint8Array): void {
    if (this.oversized) return;
    if (typeof piece === 'string') this.held.text(piece);
    else this.held.bytes(piece);
    // One byte of slack: the line may end in the `\r` of a `\r\n` split between chunks.
    if (this.held.length > this.maxLineBytes + 1) {
      this.oversizedHead = this.held.decode(this.utf8, HEAD_LENGTH);
      this.oversized = true;
      this.held.clear();
    }
  }

  /** Ends the held line with `tail`. */
  private finishLine(tail: string | Uint8Array): void {
    if (this.oversized) {
      this.lineNumber++;
      this.oversized = false;
      this.tooLong(this.oversizedHead);
      this.oversizedHead = '';
      return;
    }
    if (typeof tail === 'string') this.held.text(tail);
    else this.held.bytes(tail);
    const text = this.held.decode(this.utf8);
    this.held.clear();
    this.line(text);
  }

  private line(raw: string): void {
    const line = ++this.lineNumber;
    let text = raw.charCodeAt(raw.length - 1) === CR ? raw.slice(0, -1) : raw;
    if (line === 1 && text.startsWith(BOM)) text = text.slice(1);
    if (text.length === 0) return;
    // UTF-8 is 1 to 3 bytes per UTF-16 unit: only lines past a third of the limit need counting.
    if (
      text.length * 3 > this.maxLineBytes &&
      (text.length > this.maxLineBytes || utf8Length(text) > this.maxLineBytes)
    ) {
      this.tooLong(text);
      return;
    }
    const result = decodeLine(text, line, this.keepUnknown, this.note);
    if (result !== undefined) this.out.push(result);
  }

  private tooLong(head: string): void {
    this.out.push(
      new DecodeIssue(this.lineNumber, head, `line longer than maxLineBytes (${this.maxLineBytes}); dropped`),
    );
  }
}

/**
 * Hands what a chunk completed to a subscriber, in order: events to `next`,
 * issues to `onDiagnostic`. Stops when the subscriber has closed, and at the
 * first issue of a dropped line under `strict`, which it returns for the
 * caller to end the stream with. The one path from a chunk to a subscriber,
 * for every source.
 */
export function deliver(
  decoded: readonly Decoded[],
  subscriber: { readonly closed: boolean; next(event: EvoEvent | UnknownEvent): void },
  options: Pick<DecodeOptions, 'strict' | 'onDiagnostic'>,
): DecodeIssue | undefined {
  for (const item of decoded) {
    if (subscriber.closed) return undefined;
    if (!(item instanceof DecodeIssue)) subscriber.next(item);
    else if (options.strict && !item.kept) return item;
    else options.onDiagnostic?.(item);
  }
  return undefined;
}
