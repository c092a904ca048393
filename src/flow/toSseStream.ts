import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { ObservableByteSource, type FlowSource } from './ObservableByteSource.js';
import { above } from '../common/checks.js';

/** Options of `toSseStream`. */
export interface SseOptions {
  /**
   * The `Last-Event-ID` header of a reconnecting client, as it came: events
   * up to that index are not sent again. Anything but a decimal index is
   * refused with a `TypeError` (answer 400).
   */
  readonly lastEventId?: string | null | undefined;
  /** Milliseconds of silence before a comment line keeps the connection open. Default 15000; `Infinity` for none. */
  readonly heartbeatMs?: number;
}

const DEFAULT_HEARTBEAT_MS = 15_000;

/** The index after which to send, from a `Last-Event-ID` header; -1 for a first connection. */
function resumeAfter(lastEventId: string | null | undefined): number {
  if (lastEventId === undefined || lastEventId === null || lastEventId === '') return -1;
  const index = /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : NaN;
  if (!Number.isSafeInteger(index)) {
    throw new TypeError(
      `Last-Event-ID must be the decimal index of an event, got ${JSON.stringify(lastEventId.slice(0, 40))}`,
    );
  }
  return index;
}

/** What an error says to the client: its class and message, never its stack. */
function errorData(err: unknown): string {
  const { name, message } = err instanceof Error ? err : { name: 'Error', message: String(err) };
  return JSON.stringify({ name, message: message.split('\n')[0] });
}

/**
 * A run's events as a web `ReadableStream` of Server-Sent Events, for a
 * `Response` body or Node's `http` (`Readable.fromWeb(…).pipe(res)`). Each
 * event is one `message` whose `id` is its index from 0 and whose `data` is
 * its JSON. The stream ends with an `end` event, or with an `error` event
 * carrying the error's name and message, so that an `EventSource` knows not
 * to reconnect. Over a source that can be read again (a transcript, a stored
 * run), a client that reconnects with `Last-Event-ID` gets each event exactly
 * once. A reader that falls 64 KiB behind pauses a source given as a
 * function of its `FlowControl`.
 *
 * ```ts
 * const body = toSseStream(() => fromJsonlFile(path), { lastEventId: request.headers.get('last-event-id') });
 * return new Response(body, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
 * ```
 */
export function toSseStream(
  source: FlowSource<EvoEvent | UnknownEvent>,
  options: SseOptions = {},
): ReadableStream<Uint8Array> {
  const after = resumeAfter(options.lastEventId);
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  above('toSseStream', 'heartbeatMs', heartbeatMs, 0);
  return new ReadableStream(
    new ObservableByteSource(source, {
      frame: (event, index) => (index <= after ? undefined : `id: ${index}\ndata: ${JSON.stringify(event)}\n\n`),
      complete: () => 'event: end\ndata: {}\n\n',
      error: (err) => `event: error\ndata: ${errorData(err)}\n\n`,
      heartbeat: { everyMs: heartbeatMs, text: ': heartbeat\n\n' },
    }),
    // Chunks wait in the source, which knows how to pause what feeds them.
    { highWaterMark: 0 },
  );
}
