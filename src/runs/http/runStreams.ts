// A run's events as an HTTP body: Server-Sent Events whose ids are the
// events' indexes and whose last word says how the run ended, or JSONL
// whose body ends cleanly only when the run completed.
import { map, type Observable } from 'rxjs';
import { EvoSciError } from '../../events/errors.js';
import type { FlowControl } from '../../common/FlowControl.js';
import type { ByteFraming } from '../../flow/ObservableByteSource.js';
import { frameOf, lineOf } from '../LoggedEvent.js';
import { failureInfo, runEndOf } from '../runEnd.js';
import type { IndexedEvent } from '../wire.js';

/** A run's events for one reader, given the tap that pauses them. */
export type RunSource = (flow: FlowControl) => Observable<IndexedEvent>;

/** Options of `sseFraming`. */
export interface RunSseOptions {
  /** Milliseconds of silence before a comment line keeps the connection open. Default 15000. */
  readonly heartbeatMs?: number | undefined;
  /** The index of the last event the reader has (`Last-Event-ID`): the ids of `end` and `error` count on from it. */
  readonly after?: number | undefined;
  /** The run's event count, when it had already ended as the stream opened. */
  readonly endedWith?: number | undefined;
  /** Told each error that cut the stream short, but not a run's own end. */
  readonly onFailure?: ((error: unknown) => void) | undefined;
}

/** An event's index and text. */
export interface FramedEvent {
  /** Its index, checked. */
  readonly index: number;
  /** Its serialised form: its SSE frame, or its JSONL line. */
  readonly text: string;
}

/** A run's events for one reader, as text: what is read, and how each is framed. */
export interface RunFraming {
  /** The events, each with its serialised form, given the tap that pauses them. */
  readonly source: (flow: FlowControl) => Observable<FramedEvent>;
  /** Each event's frame, and the last words. */
  readonly framing: ByteFraming<FramedEvent>;
}

/**
 * An event's index and text, checked: a hub is code of anyone's, and an id
 * goes into the stream as it is. The text of an event from a run's log is
 * made once for all its readers.
 */
function framed(text: (indexed: IndexedEvent) => string) {
  return (indexed: IndexedEvent): FramedEvent => {
    const { index } = indexed;
    if (!Number.isSafeInteger(index) || index < 0) throw new TypeError(`the hub sent an event with index ${index}`);
    return { index, text: text(indexed) };
  };
}

/**
 * A run's events as Server-Sent Events: `id:` its index, `data:` its JSON;
 * then `end` with how the run ended, or `error` when the stream itself
 * failed. `end` has an id of its own, the run's event count N: a client
 * that reconnects after it (an `EventSource` does) sends `Last-Event-ID: N`,
 * which the handler answers with 204 to stop it. `error` carries N only
 * when the run had ended and the reader has all its events; else none, so
 * that a reconnect resumes where the reader was.
 */
export function sseFraming(source: RunSource, options: RunSseOptions = {}): RunFraming {
  const { endedWith, onFailure } = options;
  let last = options.after ?? -1;
  const end = (error: unknown) => `event: end\nid: ${last + 1}\ndata: ${JSON.stringify(runEndOf(error))}\n\n`;
  const failed = (error: unknown): string => {
    const id = endedWith !== undefined && last + 1 >= endedWith ? `id: ${endedWith}\n` : '';
    try {
      if (EvoSciError.is(error)) return end(error);
      onFailure?.(error);
      return `event: error\n${id}data: ${JSON.stringify(failureInfo(error))}\n\n`;
    } catch {
      // A thrown value that cannot even be looked at (a revoked Proxy): it is still an error.
      onFailure?.(error);
      return `event: error\n${id}data: ${JSON.stringify(failureInfo(undefined))}\n\n`;
    }
  };
  const frames = framed(frameOf);
  return {
    source: (flow: FlowControl) => source(flow).pipe(map(frames)),
    framing: {
      frame: ({ index, text }) => {
        last = index;
        return text;
      },
      complete: () => end(undefined),
      error: failed,
      heartbeat: { everyMs: options.heartbeatMs ?? 15_000, text: ': heartbeat\n\n' },
    },
  };
}

/**
 * A run's events as JSONL, one line each. The stream closes only when the
 * run completed; it errors, after every line before, when the run ended
 * otherwise (its error) or the stream failed, so that the body is cut off
 * and its reader can tell.
 */
export function jsonlFraming(source: RunSource): RunFraming {
  const lines = framed(lineOf);
  return {
    source: (flow: FlowControl) => source(flow).pipe(map(lines)),
    framing: { frame: ({ text }) => text, complete: () => undefined },
  };
}
