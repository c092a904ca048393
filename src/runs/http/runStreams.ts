// A run's events as an HTTP body: Server-Sent Events whose ids are the
// events' indexes and whose last word says how the run ended, or JSONL.
import { catchError, EMPTY, throwError, type Observable } from 'rxjs';
import { toJsonl } from '../../events/decode/jsonl.js';
import { EvoSciError } from '../../events/errors.js';
import type { FlowControl } from '../../common/FlowControl.js';
import { ObservableByteSource, type FlowSource } from '../../flow/ObservableByteSource.js';
import { errorInfoOf, runEndOf } from '../runEnd.js';
import type { IndexedEvent } from '../wire.js';

/** Options of `runSseStream`. */
export interface RunSseOptions {
  /** Milliseconds of silence before a comment line keeps the connection open. Default 15000. */
  readonly heartbeatMs?: number | undefined;
}

/**
 * The `end` or `error` event that closes a run's SSE stream: an error of the
 * run (an `EvoSciError`: it failed, was cancelled or interrupted) is how it
 * ended; any other (the hub forgot the run, a broker went away) is the
 * stream's own failure.
 */
export function lastSseEvent(error: unknown): string {
  if (error === undefined || EvoSciError.is(error)) return `event: end\ndata: ${JSON.stringify(runEndOf(error))}\n\n`;
  const { name, message } = errorInfoOf(error);
  return `event: error\ndata: ${JSON.stringify({ name, message })}\n\n`;
}

/** A run's events as Server-Sent Events: `id:` its index, `data:` its JSON; then `end` (or `error`). */
export function runSseStream(
  source: FlowSource<IndexedEvent>,
  options: RunSseOptions = {},
): ReadableStream<Uint8Array> {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  return new ReadableStream(
    new ObservableByteSource(source, {
      frame: ({ index, event }) => `id: ${index}\ndata: ${JSON.stringify(event)}\n\n`,
      complete: () => lastSseEvent(undefined),
      error: lastSseEvent,
      heartbeat: { everyMs: heartbeatMs, text: ': heartbeat\n\n' },
    }),
    // Chunks wait in the source, which knows how to pause what feeds them.
    { highWaterMark: 0 },
  );
}

/**
 * A run's events as JSONL, one line each. A run that ended otherwise than
 * completed still ends its body cleanly (its events are whole; its status
 * says how it ended); a failure of the stream itself errors the body.
 */
export function runJsonlStream(source: (flow: FlowControl) => Observable<IndexedEvent>): ReadableStream<Uint8Array> {
  const whole = (flow: FlowControl) =>
    source(flow).pipe(catchError((err: unknown) => (EvoSciError.is(err) ? EMPTY : throwError(() => err))));
  return new ReadableStream(
    new ObservableByteSource(whole, {
      frame: ({ event }) => toJsonl(event),
      complete: () => undefined,
    }),
    { highWaterMark: 0 },
  );
}
