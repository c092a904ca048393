import { DecodeIssue } from '../errors.js';
import type { EvoEvent, UnknownEvent } from '../codecs.js';
import { decodeLine, decodeLineInFull } from './decodeLine.js';
import { HeldLine, utf8Length } from './HeldLine.js';
import { textDeltaAt } from './textDelta.js';
import { atLeast } from '../../common/checks.js';

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
export function checkDecodeOptions(options: DecodeOptions, fn: string): { readonly maxLineBytes: number } {
  const { maxLineBytes = DEFAULT_MAX_LINE_BYTES } = options;
  return { maxLineBytes: atLeast(fn, 'maxLineBytes', maxLineBytes, 1) };
}

/** Bytes decoded per `TextDecoder` call: small strings stay on V8's fast path and out of the GC's way. */
const BATCH_BYTES = 64 * 1024;
const LF = '\n';
const LF_BYTE = 0x0a;
const CR = 13;
const BOM = '\ufeff';
/** How much of an oversized line its diagnostic keeps. */
const HEAD_LENGTH = 1024;

/**
 * Where a decoder hands what each line gave, as the line completes: its event,
 * or the issue of a line that did not decode (and a `kept` note before the
 * event of a line that lost digits).
 */
export interface DecodeSink {
  /** True once no more is wanted: the decoder stops before the next line, the rest of the chunk unread. */
  readonly stopped: boolean;
  event(event: EvoEvent | UnknownEvent): void;
  issue(issue: DecodeIssue): void;
}

/** Where lines would go before the first chunk is fed: nowhere, none being decoded. */
const NO_SINK: DecodeSink = { stopped: true, event: () => undefined, issue: () => undefined };

/**
 * Incremental JSONL decoder: feed it chunks of bytes or text split anywhere;
 * `feed` hands each line's event or issue to a sink as the line completes,
 * and `finish` the last line's, if it had no newline.
 *
 * Byte chunks are cut at the newline byte before they are decoded (a newline
 * byte is never part of a multi-byte UTF-8 character), and whole lines are
 * decoded some 64 KiB at a time: a streaming `TextDecoder` would leave
 * Node's fast ASCII path and allocate a UTF-16 copy of every chunk. The text
 * is then cut at `\n`: a text delta is read in place (`textDeltaAt`), any
 * other line sliced out for `decodeLine`. Only a line that spans chunks is
 * held (`HeldLine`: its whole characters decoded as they come, read back with
 * one join when it ends); a line over `maxLineBytes` is counted but no longer kept.
 */
export class JsonlDecoder {
  private readonly utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly maxLineBytes: number;
  private readonly keepUnknown: boolean;
  /** The line still open at the end of the last chunk. */
  private readonly held = new HeldLine(this.utf8);
  /** The open line passed the limit: its text is dropped until its end. */
  private oversized = false;
  private oversizedHead = '';
  private lineNumber = 0;
  /** Where the chunk being fed goes. */
  private sink = NO_SINK;
  private readonly note = (issue: DecodeIssue): void => this.sink.issue(issue);

  /** `options` as `checkDecodeOptions` accepted them: they are not checked again for each subscription. */
  constructor(options: Pick<DecodeOptions, 'keepUnknown' | 'maxLineBytes'> = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.keepUnknown = options.keepUnknown ?? false;
  }

  /** The open line: what was received after the last newline (its start only, if oversized). */
  get partialLine(): string {
    return this.oversized ? this.oversizedHead : this.held.contents();
  }

  /** Feeds one chunk; each line it completes goes to `sink` at once, until the sink stops. */
  feed(chunk: Uint8Array | string, sink: DecodeSink): void {
    this.sink = sink;
    if (typeof chunk === 'string') this.text(chunk);
    else this.bytes(chunk);
  }

  /** End of input: the final line, if it had no newline, goes to `sink`. */
  finish(sink: DecodeSink): void {
    this.sink = sink;
    if (this.lineOpen) this.finishLine('');
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
      if (this.sink.stopped) return;
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
    if (start < chunk.length && !this.sink.stopped) this.hold(chunk.subarray(start));
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
      if (this.sink.stopped) return;
      this.lineAt(chunk, start, end);
      start = end + 1;
      end = chunk.indexOf(LF, start);
    }
    if (start < chunk.length && !this.sink.stopped) this.hold(start === 0 ? chunk : chunk.slice(start));
  }

  /**
   * The line `chunk.slice(start, end)`. A text delta is taken where it lies,
   * with no line string made for it; the first line (which may start with a
   * byte order mark) and a line long enough to near the limit take the full path.
   */
  private lineAt(chunk: string, start: number, end: number): void {
    const stop = end > start && chunk.charCodeAt(end - 1) === CR ? end - 1 : end;
    const deltaTried = this.lineNumber > 0 && (stop - start) * 3 <= this.maxLineBytes;
    if (deltaTried) {
      const delta = textDeltaAt(chunk, start, stop);
      if (delta !== undefined) {
        this.lineNumber++;
        return this.sink.event(delta);
      }
    }
    this.line(chunk.slice(start, end), deltaTried);
  }

  /** Holds the start of a line; the source may reuse its buffer, so bytes are copied. */
  private hold(piece: string | Uint8Array): void {
    if (this.oversized) return;
    if (typeof piece === 'string') this.held.text(piece);
    else this.held.bytes(piece);
    // One byte of slack: the line may end in the `\r` of a `\r\n` split between chunks.
    if (this.held.length > this.maxLineBytes + 1) {
      this.oversizedHead = this.held.contents(HEAD_LENGTH);
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
    const text = this.held.contents();
    this.held.clear();
    this.line(text);
  }

  /** One whole line; `deltaTried` when `textDeltaAt` has already said it is no text delta. */
  private line(raw: string, deltaTried = false): void {
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
    const result = (deltaTried ? decodeLineInFull : decodeLine)(text, line, this.keepUnknown, this.note);
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
