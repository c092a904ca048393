import type { DecodeIssue } from '../errors.js';
import type { EvoEvent, UnknownEvent } from '../codecs.js';
import type { DecodeOptions, DecodeSink, JsonlDecoder } from './JsonlDecoder.js';

/** What a sink hands events to: an rxjs `Subscriber`, or a reader's own. */
interface Receiver {
  readonly closed: boolean;
  next(event: EvoEvent | UnknownEvent): void;
}

/**
 * A decoder's sink for one subscriber: events to `next`, issues to
 * `onDiagnostic`. It stops when the subscriber has closed, and at the first
 * issue of a dropped line under `strict`, kept in `fatal` for the caller to
 * end the stream with. The one path from a line to a subscriber, for every
 * source, and the one place of the rule: feed, then end on a fatal issue.
 */
export class SubscriberSink implements DecodeSink {
  /** Under `strict`, the issue that ends the stream. */
  fatal: DecodeIssue | undefined;

  constructor(
    private readonly subscriber: Receiver,
    private readonly options: Pick<DecodeOptions, 'strict' | 'onDiagnostic'>,
  ) {}

  get stopped(): boolean {
    return this.fatal !== undefined || this.subscriber.closed;
  }

  /** Feeds `chunk` through `decoder`; the issue that ends the stream, if `strict` met a dropped line. */
  feed(decoder: JsonlDecoder, chunk: Uint8Array | string): DecodeIssue | undefined {
    decoder.feed(chunk, this);
    return this.fatal;
  }

  /** Ends the last line (unless the stream has stopped); the issue that ends the stream, as `feed` gives it. */
  finish(decoder: JsonlDecoder): DecodeIssue | undefined {
    if (!this.stopped) decoder.finish(this);
    return this.fatal;
  }

  event(event: EvoEvent | UnknownEvent): void {
    this.subscriber.next(event);
  }

  issue(issue: DecodeIssue): void {
    if (this.options.strict && !issue.kept) this.fatal ??= issue;
    else this.options.onDiagnostic?.(issue);
  }
}
