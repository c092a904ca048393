// A followed run as the `MessageEvent`s of a NestJS `@Sse()` route. Nest is
// not a dependency: `MessageEvent` is its shape, which Nest's own type accepts.
// No Node built-ins.
import { catchError, concatWith, defer, map, of, type OperatorFunction } from 'rxjs';
import { EvoSciError } from '../events/errors.js';
import { errorInfoOf, runEndOf } from './runEnd.js';
import type { IndexedEvent } from './wire.js';

/**
 * One Server-Sent Event as NestJS's `@Sse()` writes it: `event: <type>`,
 * `id: <id>`, `retry: <retry>`, then `data:` (an object as its JSON).
 */
export interface MessageEvent {
  /** The event's data: the run event with its index, `RunEnd`, or an error's name and message. */
  data: string | object;
  /** The SSE `id`: the event's index, or the run's event count on `end`. */
  id?: string;
  /** The SSE `event`: none for a run's event, `end` or `error` last. */
  type?: string;
  /** The SSE `retry`, in milliseconds. */
  retry?: number;
}

/**
 * The id of an `end` or `error` event before any event was sent. Nest numbers
 * an event without an id itself (1, 2, … per response), so one is always
 * given; an id containing a NUL is one that SSE parsers ignore (the HTML
 * spec; `eventsource-parser` too), leaving the client's last event id as it was.
 */
const NO_NEW_ID = '\0';

/** `end` when a run ended (completed, or with its error), `error` for any other failure. */
function lastMessage(error: unknown, id: string): MessageEvent {
  if (EvoSciError.is(error)) return { type: 'end', id, data: runEndOf(error) };
  const { name, message } = errorInfoOf(error);
  return { type: 'error', id, data: { name, message } };
}

/**
 * A followed run (`hub.follow(id, { after })`) as the `MessageEvent`s of a
 * NestJS `@Sse()` route, on the same wire as `runsHandler`: each event is a
 * message whose `id` is its index and whose `data` is the event (Nest writes
 * its JSON). The stream always ends with one last message, then completes:
 * - `end` with the `RunEnd` (`{ state: 'completed' }`, or the state and the
 *   error when the run ended otherwise: `CancelledError`, `ExitError`,
 *   `RunInterruptedError`, any `EvoSciError`);
 * - `error` with `{ name, message }` (the first line) for any other error:
 *   `UnknownRunError`, `ForgottenRunError`, a broker's.
 * So Nest never sees an error (it would write its own `error` event, with
 * an id of its own numbering) and a client that stops on `end` or `error`
 * does not reconnect into a run that is over.
 *
 * Refusals. An event names an error; only a status makes it its class
 * again (`followRun` gives `UnknownRunError` for a 404, `ForgottenRunError`
 * for a 410), and Nest sends the stream's 200 as soon as the route returns
 * it. So the route refuses first, as `runsHandler` does: it is `async`, and
 * awaits `hub.status(id)` before it returns the stream; Nest answers a
 * `RunHubError` with its status. An `error` event is then left for a run
 * that went away once its stream began.
 *
 * Ids. Nest gives an id-less event an id from its own count (1, 2, …), which
 * an `EventSource` would send back as `Last-Event-ID`. So every message has
 * one: `end` and `error` repeat the id of the last event sent before them,
 * which leaves the client where it was (a reconnect from there skips nothing
 * and repeats nothing), and before any event they carry an id with a NUL,
 * which SSE parsers ignore: the client keeps the `Last-Event-ID` it sent.
 * Unsubscribing (the client went away) unsubscribes from the run.
 *
 * ```ts
 * @Sse(':id/events')
 * async events(@Param('id') id: string, @Headers('last-event-id') lastEventId?: string) {
 *   const after = afterOf(lastEventId); // 400
 *   await this.hub.status(id); // 404, 410
 *   return this.hub.follow(id, { after }).pipe(toMessageEvents());
 * }
 * ```
 *
 * ```
 * follow:  -a-b-|         a = { index: 0, event: A }
 * result:  -a-b-(e|)      a = { id: '0', data: A }, e = { type: 'end', id: '1', data: { state: 'completed' } }
 * follow:  -a-#           # = CancelledError
 * result:  -a-(e|)        e = { type: 'end', id: '0', data: { state: 'cancelled', error: { name, message } } }
 * follow:  #              # = UnknownRunError
 * result:  (x|)           x = { type: 'error', id: '\0', data: { name: 'UnknownRunError', message } }
 * ```
 */
export function toMessageEvents(): OperatorFunction<IndexedEvent, MessageEvent> {
  return (source) =>
    defer(() => {
      // The id of the last event this subscriber was sent: what `end` and `error` repeat.
      let lastId = NO_NEW_ID;
      return source.pipe(
        map(({ index, event }): MessageEvent => ({ id: (lastId = String(index)), data: event })),
        concatWith(defer(() => of<MessageEvent>({ type: 'end', id: lastId, data: runEndOf(undefined) }))),
        catchError((error: unknown) => of(lastMessage(error, lastId))),
      );
    });
}
