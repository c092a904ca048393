// A followed run as the `MessageEvent`s of a NestJS `@Sse()` route. Nest is
// not a dependency: `MessageEvent` is its shape, which Nest's own type accepts.
// No Node built-ins.
import { catchError, concatWith, defer, map, of, type OperatorFunction } from 'rxjs';
import { EvoSciError } from '../events/errors.js';
import { failureInfo, hasEnded, runEndOf } from './runEnd.js';
import type { IndexedEvent, RunStatus } from './wire.js';

/**
 * One Server-Sent Event as NestJS's `@Sse()` writes it: `event: <type>`,
 * `id: <id>`, `retry: <retry>`, then `data:` (an object as its JSON).
 */
export interface MessageEvent {
  /** The event's data: the run event with its index, `RunEnd`, or an error's name and message. */
  data: string | object;
  /**
   * The SSE `id`: the event's index; on `end`, the run's event count; on
   * `error`, the index of the last event the client has (the event count
   * once it has every event of a run that ended).
   */
  id?: string;
  /** The SSE `event`: none for a run's event, `end` or `error` last. */
  type?: string;
  /** The SSE `retry`, in milliseconds. */
  retry?: number;
}

/** Options of `toMessageEvents`: what the route knew before it followed the run. */
export interface MessageEventsOptions {
  /**
   * The `after` the run is followed from (`afterOf(lastEventId)`): the
   * index of the last event the client has. The ids of `end` and `error`
   * count on from it when the response sends no event, as after a
   * reconnect that has nothing new. Give the same as to `follow`.
   */
  readonly after?: number | undefined;
  /**
   * The run's status, read before following it (`hub.status(id)`). When
   * the run had ended, an `error` sent once the client has all its events
   * carries the event count, as `end` does, so that its reconnect is
   * answered 204 (`hasSeenEnd`) rather than following the run again.
   */
  readonly status?: RunStatus | undefined;
}

/**
 * The id of an `error` event before the client has any event. Nest numbers
 * an event without an id itself (1, 2, … per response), so one is always
 * given; an id containing a NUL is one that SSE parsers ignore (the HTML
 * spec; `eventsource-parser` too), leaving the client's last event id as it was.
 */
const NO_NEW_ID = '\0';

/** `end`, with how the run ended, the client having its events up to `last`: its id is the event count. */
const endMessage = (error: unknown, last: number): MessageEvent => ({
  type: 'end',
  id: String(last + 1),
  data: runEndOf(error),
});

/** The message of an error: `end` when it is how the run ended, `error` for any other failure. */
function lastMessage(error: unknown, last: number, endedWith: number | undefined): MessageEvent {
  const id = errorId(last, endedWith);
  try {
    if (EvoSciError.is(error)) return endMessage(error, last);
    return { type: 'error', id, data: failureInfo(error) };
  } catch {
    // A thrown value that cannot even be looked at (a revoked Proxy): it is still an error.
    return { type: 'error', id, data: failureInfo(undefined) };
  }
}

/** The id of `error`: the event count once the client has every event of a run that ended, else where it is. */
function errorId(last: number, endedWith: number | undefined): string {
  if (endedWith !== undefined && last + 1 >= endedWith) return String(endedWith);
  return last >= 0 ? String(last) : NO_NEW_ID;
}

/**
 * A followed run (`hub.follow(id, { after })`) as the `MessageEvent`s of a
 * NestJS `@Sse()` route, on the same wire as `runsHandler`: each event is a
 * message whose `id` is its index and whose `data` is the event (Nest writes
 * its JSON). The stream always ends with one last message, then completes:
 * - `end` with the `RunEnd` (`{ state: 'completed' }`, or the state and the
 *   error when the run ended otherwise: `CancelledError`, `ExitError`,
 *   `RunInterruptedError`, any `EvoSciError`);
 * - `error` with `{ name, message }` for any other error: a hub's refusal
 *   (`UnknownRunError`, `ForgottenRunError`…) with its first line, any
 *   other (a broker's, a file's) by its class alone, since its message may
 *   carry the server's paths or addresses, as `runsHandler` sends it.
 * So Nest never sees an error (it would write its own `error` event, with
 * an id of its own numbering).
 *
 * Refusals. An event names an error; only a status makes it its class
 * again (`followRun` gives `UnknownRunError` for a 404, `ForgottenRunError`
 * for a 410), and Nest sends the stream's 200 as soon as the route returns
 * it. So the route refuses first, as `runsHandler` does: it is `async`, and
 * awaits `hub.status(id)` before it returns the stream; Nest answers a
 * `RunHubError` with its status. An `error` event is then left for a run
 * that went away once its stream began.
 *
 * Ids. An `EventSource` reconnects whenever its response closes, even after
 * `end`, with the last id it was sent as `Last-Event-ID`; only a 204 (or an
 * error status) stops it. So `end` carries the run's event count: the last
 * event's index + 1 (`after` + 1 when the response sent no event), an
 * index no event has, which the route answers with 204 (`hasSeenEnd`). An
 * `error` carries the index of the last event the client has, so that a
 * reconnect resumes from there, repeating nothing and skipping nothing; or
 * the event count once the client has every event of a run that had ended
 * (`status`); or, before the client has any event, an id with a NUL, which
 * SSE parsers ignore. Nest would number an id-less message itself.
 * Unsubscribing (the client went away) unsubscribes from the run.
 *
 * ```ts
 * @Sse(':id/events')
 * async events(
 *   @Param('id') id: string,
 *   @Headers('last-event-id') lastEventId: string | undefined,
 *   @Res({ passthrough: true }) response: { status(code: number): { end(): unknown } },
 * ): Promise<Observable<MessageEvent>> {
 *   const after = afterOf(lastEventId); // 400
 *   const status = await this.hub.status(id); // 404, 410
 *   if (hasSeenEnd(status, after)) {
 *     response.status(204).end(); // an EventSource back after `end`: this stops it
 *     return EMPTY;
 *   }
 *   return this.hub.follow(id, { after }).pipe(toMessageEvents({ after, status }));
 * }
 * ```
 *
 * ```
 * follow:  -a-b-|         a = { index: 0, event: A }, b = { index: 1, event: B }
 * result:  -a-b-(e|)      a = { id: '0', data: A }, e = { type: 'end', id: '2', data: { state: 'completed' } }
 * follow:  ---|           (after: 4: the client has the run's 5 events)
 * result:  ---(e|)        e = { type: 'end', id: '5', data: { state: 'completed' } }
 * follow:  -a-#           # = CancelledError
 * result:  -a-(e|)        e = { type: 'end', id: '1', data: { state: 'cancelled', error: { name, message } } }
 * follow:  -a-#           # = an Error('connection lost'): its message may carry the server's paths
 * result:  -a-(x|)        x = { type: 'error', id: '0', data: { name: 'Error', message: 'the server failed to send the rest of this run' } }
 * follow:  #              # = UnknownRunError
 * result:  (x|)           x = { type: 'error', id: '\0', data: { name: 'UnknownRunError', message } }
 * ```
 */
export function toMessageEvents(options: MessageEventsOptions = {}): OperatorFunction<IndexedEvent, MessageEvent> {
  const { after, status } = options;
  const endedWith = status !== undefined && hasEnded(status) ? status.events : undefined;
  return (source) =>
    defer(() => {
      // The index of the last event this subscriber's client has: what the ids of `end` and `error` count on from.
      let last = after ?? -1;
      return source.pipe(
        map(({ index, event }): MessageEvent => ({ id: String((last = index)), data: event })),
        concatWith(defer(() => of(endMessage(undefined, last)))),
        catchError((error: unknown) => of(lastMessage(error, last, endedWith))),
      );
    });
}
