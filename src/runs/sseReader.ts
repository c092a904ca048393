// A Server-Sent Events body as an Observable of its messages, decoded by
// `eventsource-parser` as the bytes arrive. No Node built-ins: `followRun`
// reads a hub's events with it in browsers too.
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import { asyncScheduler, Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';

export type { EventSourceMessage } from 'eventsource-parser';

/** Options of `sseMessages`. */
export interface SseReaderOptions {
  /** The most characters a message (or an unfinished line) may hold before the body is given up. */
  readonly maxChars: number;
  /** Told each `retry:` field: the server's reconnection delay, in milliseconds. */
  readonly onRetry?: (ms: number) => void;
  /**
   * Milliseconds without a byte (no event, no heartbeat) after which the
   * body is given up with `SseIdleError`: a connection that went half-open
   * sends nothing and never ends. Default: wait for ever.
   */
  readonly idleMs?: number;
  /** Where the idle timer runs. Default: RxJS's async scheduler. */
  readonly scheduler?: SchedulerLike;
}

/** The body sent nothing, not even a heartbeat, for `idleMs`: it is cancelled. */
export class SseIdleError extends Error {
  static {
    this.prototype.name = 'SseIdleError';
  }

  constructor(readonly idleMs: number) {
    super(`nothing came for ${idleMs} ms, not even a heartbeat`);
  }
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
    const idle = new IdleWatch(options.idleMs, options.scheduler ?? asyncScheduler, () => {
      subscriber.error(new SseIdleError(options.idleMs!));
      reader.cancel().catch(() => undefined);
    });
    void pump(reader, parser, subscriber, idle);
    return () => {
      idle.stop();
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
  idle: IdleWatch,
): Promise<void> {
  const utf8 = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (subscriber.closed) return;
      idle.touch();
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

/** The longest wait a timer can keep (about 24.8 days): past it, a wait is for ever. */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** A timer restarted by every chunk of a body, which calls `onIdle` once if none comes for `idleMs`. */
class IdleWatch {
  private timer: Subscription | undefined;

  constructor(
    private readonly idleMs: number | undefined,
    private readonly scheduler: SchedulerLike,
    private readonly onIdle: () => void,
  ) {
    this.touch();
  }

  touch(): void {
    // Past what a timer can wait (about 24.8 days), as good as for ever: a longer delay would fire at once.
    if (this.idleMs === undefined || this.idleMs > LONGEST_TIMER_MS) return;
    this.timer?.unsubscribe();
    this.timer = this.scheduler.schedule(this.onIdle, this.idleMs);
  }

  stop(): void {
    this.timer?.unsubscribe();
  }
}
