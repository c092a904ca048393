import type { EvoEvent } from '../events/EvoEvent.js';
import type { UnknownEvent } from '../events/UnknownEvent.js';
import { decodeLine } from './decodeLine.js';
import { DecodeIssue } from './DecodeIssue.js';
import type { DecodeOptions } from './DecodeOptions.js';
import type { JsonlSink } from './JsonlSink.js';

const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Bytes decoded per `TextDecoder` call: small strings stay on V8's fast path and out of the GC's way. */
const BATCH_BYTES = 64 * 1024;
const LF = '\n';
const LF_BYTE = 0x0a;
const CR = 13;
const BOM = '\ufeff';
/** How much of an oversized line its diagnostic keeps. */
const HEAD_LENGTH = 1024;


/**
 * A copy of the bytes from `start`: the source may reuse its buffer, and a
 * Node `Buffer`'s own `slice` would only be a view.
 */
function copy(chunk: Uint8Array, start: number): Uint8Array {
  return Uint8Array.prototype.slice.call(chunk, start);
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
 * Incremental JSONL decoder: feed it chunks of bytes or text split anywhere,
 * get events and issues as soon as each line is complete.
 *
 * Byte chunks are cut at the newline byte before they are decoded (a newline
 * byte is never part of a multi-byte UTF-8 character), and whole lines are
 * decoded some 64 KiB at a time: a streaming `TextDecoder` would leave
 * Node's fast ASCII path and allocate a UTF-16 copy of every chunk. The text
 * is then cut at `\n`; slices go to `JSON.parse` without copying. Only a line
 * that spans chunks is held, as the pieces received, and joined once when it
 * ends; a line over `maxLineBytes` is counted but no longer kept.
 */
export class JsonlDecoder {
  private readonly utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly maxLineBytes: number;
  private readonly keepUnknown: boolean;
  /** Pieces of the line still open at the end of the last chunk, bytes or text as they came. */
  private pending: (string | Uint8Array)[] = [];
  /** Size of `pending`: bytes, and UTF-16 units for text (a lower bound of its UTF-8 size). */
  private pendingLength = 0;
  /** The open line passed the limit: its text is dropped until its end. */
  private oversized = false;
  private oversizedHead = '';
  private lineNumber = 0;
  private stopped = false;

  constructor(
    private readonly sink: JsonlSink,
    options: Pick<DecodeOptions, 'keepUnknown' | 'maxLineBytes'> = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.keepUnknown = options.keepUnknown ?? false;
  }

  /** The open line: what was received after the last newline (its start only, if oversized). */
  get partialLine(): string {
    return this.oversized ? this.oversizedHead : this.joinPending();
  }

  /** Feed one chunk. */
  write(chunk: Uint8Array | string): void {
    if (this.stopped) return;
    if (typeof chunk === 'string') this.text(chunk);
    else this.bytes(chunk);
  }

  /** End of input: flush a final line that has no newline. */
  end(): void {
    if (this.stopped) return;
    if (this.lineOpen) this.finishLine('');
    this.stopped = true;
  }

  /** Whether a line was started and not yet ended. */
  private get lineOpen(): boolean {
    return this.pendingLength > 0 || this.oversized;
  }

  /** Stop decoding: later chunks and the rest of this one are ignored. */
  stop(): void {
    this.stopped = true;
  }

  private bytes(chunk: Uint8Array): void {
    let start = 0;
    if (this.lineOpen) {
      const end = chunk.indexOf(LF_BYTE);
      if (end === -1) return this.hold(copy(chunk, 0));
      this.finishLine(chunk.subarray(0, end));
      start = end + 1;
    }
    while (start < chunk.length && !this.stopped) {
      let cut = chunk.length - start > BATCH_BYTES ? chunk.lastIndexOf(LF_BYTE, start + BATCH_BYTES - 1) : chunk.lastIndexOf(LF_BYTE);
      // A single line longer than a batch: decode up to its end.
      if (cut < start) cut = chunk.indexOf(LF_BYTE, start + BATCH_BYTES);
      if (cut === -1) break;
      this.text(this.utf8.decode(chunk.subarray(start, cut + 1)));
      start = cut + 1;
    }
    if (start < chunk.length && !this.stopped) this.hold(copy(chunk, start));
  }

  private text(chunk: string): void {
    let start = 0;
    let end = chunk.indexOf(LF);
    if (end !== -1 && this.lineOpen) {
      this.finishLine(chunk.slice(0, end));
      start = end + 1;
      end = chunk.indexOf(LF, start);
    }
    while (end !== -1 && !this.stopped) {
      this.line(chunk.slice(start, end));
      start = end + 1;
      end = chunk.indexOf(LF, start);
    }
    if (start < chunk.length && !this.stopped) this.hold(start === 0 ? chunk : chunk.slice(start));
  }

  private hold(piece: string | Uint8Array): void {
    if (this.oversized) return;
    this.pendingLength += piece.length;
    this.pending.push(piece);
    // One unit of slack: the line may end in the `\r` of a `\r\n` split between chunks.
    if (this.pendingLength > this.maxLineBytes + 1) {
      this.oversizedHead = this.head();
      this.oversized = true;
      this.pending = [];
      this.pendingLength = 0;
    }
  }

  /** The start of the held line, for the diagnostic, decoded from the first pieces only. */
  private head(): string {
    const first: (string | Uint8Array)[] = [];
    let size = 0;
    for (const piece of this.pending) {
      const part = typeof piece === 'string' ? piece.slice(0, HEAD_LENGTH) : piece.subarray(0, HEAD_LENGTH);
      first.push(part);
      size += part.length;
      if (size >= HEAD_LENGTH) break;
    }
    return this.joinPieces(first).slice(0, HEAD_LENGTH);
  }

  /** The held pieces and `tail` as text. */
  private joinPending(tail?: string | Uint8Array): string {
    return this.joinPieces(tail === undefined ? this.pending : [...this.pending, tail]);
  }

  /** Pieces as text; runs of byte pieces are decoded together, so a character split between them is whole. */
  private joinPieces(pieces: readonly (string | Uint8Array)[]): string {
    let text = '';
    let bytes: Uint8Array[] = [];
    const flush = () => {
      if (bytes.length === 0) return;
      const size = bytes.reduce((sum, b) => sum + b.length, 0);
      const joined = new Uint8Array(size);
      let at = 0;
      for (const b of bytes) {
        joined.set(b, at);
        at += b.length;
      }
      text += this.utf8.decode(joined);
      bytes = [];
    };
    for (const piece of pieces) {
      if (typeof piece === 'string') {
        flush();
        text += piece;
      } else bytes.push(piece);
    }
    flush();
    return text;
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
    const text = this.joinPending(tail);
    this.pending = [];
    this.pendingLength = 0;
    this.line(text);
  }

  private line(raw: string): void {
    const line = ++this.lineNumber;
    let text = raw.charCodeAt(raw.length - 1) === CR ? raw.slice(0, -1) : raw;
    if (line === 1 && text.startsWith(BOM)) text = text.slice(1);
    if (text.length === 0) return;
    // UTF-8 is 1 to 3 bytes per UTF-16 unit: only lines past a third of the limit need counting.
    if (text.length * 3 > this.maxLineBytes && (text.length > this.maxLineBytes || utf8Length(text) > this.maxLineBytes)) {
      this.tooLong(text);
      return;
    }
    const result = decodeLine(text, line, this.keepUnknown);
    if (result === undefined) return;
    if (result instanceof DecodeIssue) this.sink.issue(result);
    else this.sink.event(result);
  }

  private tooLong(head: string): void {
    this.sink.issue(
      new DecodeIssue(this.lineNumber, head, `line longer than maxLineBytes (${this.maxLineBytes}); dropped`),
    );
  }
}
