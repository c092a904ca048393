// A Server-Sent Events body as an Observable of its messages, decoded by
// `eventsource-parser` as the bytes arrive. No Node built-ins: `followRun`
// reads a hub's events with it in browsers too.
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { Observable, type Subscriber } from 'rxjs';

export type { EventSourceMessage } from 'eventsource-parser';

/** Options of `sseMessages`. */
export interface SseReaderOptions {
  /** The most characters a message (or an unfinished line) may hold before the body is given up. */
  readonly maxChars: number;
  /** Told each `retry:` field: the server's reconnection delay, in milliseconds. */
  readonly onRetry?: (ms: number) => void;
}

/** A message grew past `maxChars`: what was buffered of it is dropped, and the rest of the body is not read. */
export class SseOverflowError extends Error {
  static {
    this.prototype.name = 'SseOverflowError';
  }

  constructor(readonly maxChars: number) {
    super(`a Server-Sent Events message is longer than ${maxChars} characters`);
  }
}

/**
 * The messages of an SSE body, each as soon as its blank line arrives
 * (comments such as heartbeats are skipped). Completes when the body ends,
 * what was left unfinished dropped; errors when the body fails, or with
 * `SseOverflowError` when a message outgrows `maxChars`, so that memory stays
 * bounded. Unsubscribing cancels the body. One subscription only: a body is
 * read once.
 */
export function sseMessages(
  body: ReadableStream<Uint8Array>,
  options: SseReaderOptions,
): Observable<EventSourceMessage> {
  return new Observable<EventSourceMessage>((subscriber) => {
    const reader = body.getReader();
    const parser = createParser({
      onEvent: (message) => subscriber.next(message),
      onRetry: options.onRetry,
      onError: (error) => {
        // Other parse errors (an unknown field, a bad `retry:`) are ignored, as an EventSource ignores them.
        if (error.type === 'max-buffer-size-exceeded') subscriber.error(new SseOverflowError(options.maxChars));
      },
      maxBufferSize: options.maxChars,
    });
    void pump(reader, parser, subscriber);
    return () => {
      // Rejects when the body has already failed: nothing is left to release then.
      reader.cancel().catch(() => undefined);
    };
  });
}

/** Reads the body into the parser until it ends, fails, or no one listens. */
async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  parser: EventSourceParser,
  subscriber: Subscriber<EventSourceMessage>,
): Promise<void> {
  const utf8 = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (subscriber.closed) return;
      if (done) {
        parser.feed(utf8.decode());
        subscriber.complete();
        return;
      }
      parser.feed(utf8.decode(value, { stream: true }));
    }
  } catch (err) {
    subscriber.error(err);
  }
}
