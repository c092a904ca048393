// The `Last-Event-ID` header of a reconnecting SSE client: the `after` of
// `RunHub.follow`, and whether the client has the run's end. No Node built-ins.
import { RunRequestError } from './errors.js';
import { hasEnded } from './runEnd.js';
import type { RunStatus } from './wire.js';

/** An event's index as an SSE id: decimal, at most 15 digits (below 2^53, so exact as a number). */
const EVENT_INDEX = /^\d{1,15}$/;

/**
 * The `after` of `RunHub.follow` from a `Last-Event-ID` header: the index of
 * the last event the client has, or `undefined` (no header, or an empty one:
 * from the first event). Anything but a decimal index of 1 to 15 digits is
 * refused with a `RunRequestError` (status 400), never read as "from the
 * start".
 *
 * ```ts
 * hub.follow(id, { after: afterOf(request.headers['last-event-id']) });
 * ```
 */
export function afterOf(lastEventId: string | undefined): number | undefined {
  if (lastEventId === undefined || lastEventId === '') return undefined;
  if (!EVENT_INDEX.test(lastEventId)) {
    throw new RunRequestError(
      `Last-Event-ID must be the decimal index of an event, got ${JSON.stringify(lastEventId.slice(0, 40))}`,
    );
  }
  return Number(lastEventId);
}

/**
 * Whether an SSE client that reconnected from `after` (`afterOf` its
 * `Last-Event-ID`) has seen the run's end: the run ended, and `after` is at
 * or past its event count, which only the `end` event carries as its id. An
 * `EventSource` reconnects whenever its response closes, and stops only on
 * a `204 No Content` (or an error status): answer it 204, as `runsHandler`
 * does, and it does not come back.
 *
 * ```ts
 * const after = afterOf(lastEventId);
 * const status = await hub.status(id);
 * if (hasSeenEnd(status, after)) return noContent(); // 204
 * ```
 */
export function hasSeenEnd(status: RunStatus, after: number | undefined): boolean {
  return hasEnded(status) && after !== undefined && after >= status.events;
}
