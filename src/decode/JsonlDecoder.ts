import type { EvoEvent } from '../events/EvoEvent.js';
import type { UnknownEvent } from '../events/UnknownEvent.js';
import { decodeLine } from './decodeLine.js';
import { DecodeIssue } from './DecodeIssue.js';
import type { DecodeOptions } from './DecodeOptions.js';

const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
const LF = '\n';
const CR = 13;

/** Where a `JsonlDecoder` sends what it finds. */
export interface JsonlSink {
  event(event: EvoEvent | UnknownEvent): void;
  issue(issue: DecodeIssue): void;
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
 * Byte chunks go through one streaming `TextDecoder` call each (a UTF-8
 * character split between chunks is carried inside it), then the text is cut
 * at `\n` with `indexOf`; slices of the chunk are passed to `JSON.parse`
 * without copying. Only a line that spans chunks is joined, once, when it
 * ends. A line over `maxLineBytes` is counted but no longer kept.
 */
export class JsonlDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  private readonly maxLineBytes: number;
  private readonly keepUnknown: boolean;
  /** Pieces of the line still open at the end of the last chunk. */
  private pending: string[] = [];
  /** UTF-16 length of `pending`: a lower bound of its UTF-8 length. */
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

  /** Lines completed so far. */
  get lines(): number {
    return this.lineNumber;
  }

  /** Feed one chunk. */
  write(chunk: Uint8Array | string): void {
    if (this.stopped) return;
    this.text(typeof chunk === 'string' ? chunk : this.utf8.decode(chunk, { stream: true }));
  }

  /** End of input: flush a final line that has no newline. */
  end(): void {
    if (this.stopped) return;
    const rest = this.utf8.decode();
    if (rest) this.text(rest);
    if (this.pendingLength > 0 || this.oversized) this.finishLine('');
    this.stopped = true;
  }

  /** Stop decoding: later chunks and the rest of this one are ignored. */
  stop(): void {
    this.stopped = true;
  }

  /** The open line at end of input: text received after the last newline. */
  get partialLine(): string {
    return this.oversized ? this.oversizedHead : this.pending.join('');
  }

  private text(chunk: string): void {
    let start = 0;
    let end = chunk.indexOf(LF);
    while (end !== -1) {
      if (this.pendingLength > 0 || this.oversized) this.finishLine(chunk.slice(0, end));
      else this.line(chunk.slice(start, end));
      if (this.stopped) return;
      start = end + 1;
      end = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.hold(start === 0 ? chunk : chunk.slice(start));
  }

  private hold(piece: string): void {
    if (this.oversized) return;
    this.pendingLength += piece.length;
    this.pending.push(piece);
    if (this.pendingLength > this.maxLineBytes) {
      this.oversizedHead = this.pending.join('').slice(0, 1024);
      this.oversized = true;
      this.pending = [];
      this.pendingLength = 0;
    }
  }

  /** Ends the line held in `pending` with `tail`. */
  private finishLine(tail: string): void {
    if (this.oversized) {
      this.lineNumber++;
      this.oversized = false;
      this.tooLong(this.oversizedHead);
      this.oversizedHead = '';
      return;
    }
    this.pending.push(tail);
    const text = this.pending.join('');
    this.pending = [];
    this.pendingLength = 0;
    this.line(text);
  }

  private line(raw: string): void {
    const line = ++this.lineNumber;
    const text = raw.charCodeAt(raw.length - 1) === CR ? raw.slice(0, -1) : raw;
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
