// What the events stream's limits do to a run in progress, said as it happens:
// a `StorageLimitError` that names the limit, instead of a run that loses its
// records silently and a writer told something false.
import type { NatsConnection } from '@nats-io/transport-node';
import { StorageLimitError } from '../wire/errors.js';
import { type JetStreamLayout } from '../wire/layout.js';
import { clientsOf } from '../wire/clients.js';

/** The limits of the events stream that can end a run. */
export interface StreamLimits {
  readonly stream: string;
  /** Bytes the stream keeps at most; -1: no limit. */
  readonly maxBytes: number;
  /** How long it keeps a message; 0: for ever. */
  readonly maxAgeMs: number;
}

/** The run a limit is met by, for messages. */
export interface LimitedRun {
  readonly runId: string;
  readonly attempt: number;
}

/** The events stream's limits, or `undefined` if they cannot be read (a user without the right to): then nothing is timed by them. */
export async function readStreamLimits(nc: NatsConnection, layout: JetStreamLayout): Promise<StreamLimits | undefined> {
  try {
    const jsm = await clientsOf(nc).manager();
    const { config } = await jsm.streams.info(layout.eventsStream);
    return { stream: config.name, maxBytes: config.max_bytes ?? -1, maxAgeMs: (config.max_age ?? 0) / 1_000_000 };
  } catch {
    return undefined;
  }
}

/** What JetStream says when a stream (or the account, or the server) has no room for a message. */
const NO_ROOM =
  /maximum (bytes|messages)( per subject)? exceeded|resource limits exceeded|insufficient (storage |memory )?resources/i;

/** Why the stream refused a message for want of room, as the server said it, if that is why `err` (or its cause) failed. */
export function noRoomReason(err: unknown): string | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const match = NO_ROOM.exec(e.message);
    if (match) return match[0];
  }
  return undefined;
}

/** The longest a timer may wait at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `onLimit` when a run started now nears the stream's `max_age`: the
 * age less a margin (a tenth, between 1 s and 1 min, at most half) in which
 * its last events and `finished` record are stored while its `started`
 * record still is. Returns the function that stops watching.
 */
export function watchAge(limits: StreamLimits, onLimit: () => void): () => void {
  if (!(limits.maxAgeMs > 0)) return () => undefined;
  const margin = Math.min(Math.max(limits.maxAgeMs / 10, 1000), 60_000, limits.maxAgeMs / 2);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number) => {
    timer = setTimeout(
      () => (left > LONGEST_TIMER_MS ? arm(left - LONGEST_TIMER_MS) : onLimit()),
      Math.min(left, LONGEST_TIMER_MS),
    );
    // A timer of days must not keep the process alive.
    timer.unref?.();
  };
  arm(limits.maxAgeMs - margin);
  return () => clearTimeout(timer);
}

/** A duration as its limit is usually written. */
export function duration(ms: number): string {
  const DAY = 86_400_000;
  if (ms >= DAY && ms % DAY === 0) return `${ms / DAY} d`;
  if (ms >= 1000) return `${Number((ms / 1000).toFixed(3))} s`;
  return `${ms} ms`;
}

/** The limits set on the stream, as its configuration names them. */
function limitsOf(limits: StreamLimits | undefined): string {
  if (!limits) return 'its limits';
  const set = [
    ...(limits.maxBytes > 0 ? [`max_bytes ${limits.maxBytes}`] : []),
    ...(limits.maxAgeMs > 0 ? [`max_age ${duration(limits.maxAgeMs)}`] : []),
  ];
  return set.length === 0 ? 'no limits' : set.join(', ');
}

/** The stream had no room for one of the run's messages: it refuses new messages rather than remove stored runs. */
export function streamFullError(
  run: LimitedRun,
  stream: string,
  limits: StreamLimits | undefined,
  reason: string,
  cause: unknown,
): StorageLimitError {
  return new StorageLimitError(
    `run ${run.runId} attempt ${run.attempt}: stream ${stream} has no room (${reason}; ${limitsOf(limits)}): it refuses new messages rather than remove stored runs, and has room again as runs pass its max_age or are deleted`,
    { cause },
  );
}

/** The run was stopped before the stream's `max_age` removed its start. */
export function ageLimitError(run: LimitedRun, limits: StreamLimits, ranMs: number): StorageLimitError {
  return new StorageLimitError(
    `run ${run.runId} attempt ${run.attempt}: stopped after ${duration(ranMs)}, before stream ${limits.stream} removes its started record (max_age ${duration(limits.maxAgeMs)}); runs must end within the stream's max_age`,
  );
}

/** The run's `started` record left the stream while the run was written. */
export function startRemovedError(
  run: LimitedRun,
  stream: string,
  limits: StreamLimits | undefined,
  startSequence: number,
): StorageLimitError {
  return new StorageLimitError(
    `run ${run.runId} attempt ${run.attempt}: its started record (stream sequence ${startSequence}) was removed from stream ${stream} while the run was written (${limitsOf(limits)}, or a purge); the run cannot be read from its start`,
  );
}

/** The run's events passed the writer's cap. */
export function runTooLargeError(run: LimitedRun, maxRunBytes: number, event: number): StorageLimitError {
  return new StorageLimitError(
    `run ${run.runId} attempt ${run.attempt}: its events passed maxRunBytes (${maxRunBytes} bytes) at event ${event}; stopped`,
  );
}
