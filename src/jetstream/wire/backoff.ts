import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiError } from '@nats-io/jetstream';

/** Waits that double from `firstMs` to at most `maxMs`: the pauses of a broker call tried again until it answers. */
export function* doubling(firstMs: number, maxMs: number): Generator<number, never> {
  for (let delay = firstMs; ; delay = Math.min(delay * 2, maxMs)) yield delay;
}

/** Resolves after `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/**
 * JetStream's error code for "temporarily unavailable", its answer while a
 * stream has no leader (an election, a server restarting): ask again. Other
 * errors of status 503 (a full stream's store failure, say) are lasting.
 */
export const UNAVAILABLE = 10008;

/**
 * JetStream's error code (servers from 2.11) for a publish whose
 * `Nats-Msg-Id` the stream is still proposing: not stored yet, and never if
 * the proposal is lost in a leader change. Ask again.
 */
export const IN_PROCESS = 10158;

/**
 * Whether a broker call's failure is an answer that asking again will not
 * change: a JetStream API error (but "temporarily unavailable", which an
 * election gives), a payload over the server's limit, an invalid request, a
 * permission the user lacks. Anything else (no answer in time, no
 * responders, a connection being made again) may pass.
 */
export function lasting(err: unknown): boolean {
  for (let cause = err; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof JetStreamApiError) return cause.code !== UNAVAILABLE && cause.code !== IN_PROCESS;
    if (/payload|invalid|permissions violation/i.test(`${cause.name} ${cause.message}`)) return true;
  }
  return false;
}

/**
 * `call`, tried again as a publish is (waits doubling from 50 ms to 1 s)
 * while its failure may pass and the connection is open, until `until`
 * (a `Date.now()` time) would be passed; then its last failure.
 */
export async function retried<T>(nc: NatsConnection, call: () => Promise<T>, until: number): Promise<T> {
  const delays = doubling(50, 1000);
  for (;;) {
    try {
      return await call();
    } catch (err) {
      const delay = delays.next().value;
      if (nc.isClosed() || lasting(err) || Date.now() + delay > until) throw err;
      await pause(delay);
    }
  }
}
