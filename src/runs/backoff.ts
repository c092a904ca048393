// How long a follower waits before its next try: exponential backoff with
// full jitter, so that the readers a restarted hub dropped all at once do
// not all come back at once. No Node built-ins.
import { LONGEST_TIMER_MS } from './sseReader.js';

/**
 * The longest base delay a server's `retry:` field may set: a server that
 * asks for more (`retry: 2000000000`, 23 days) gets this.
 */
export const MAX_SERVER_RETRY_MS = 60_000;

/** The delay a server's `retry:` asks for, held to `MAX_SERVER_RETRY_MS`; `undefined` for one that is no delay. */
export function serverRetryMs(ms: number): number | undefined {
  return ms >= 0 ? Math.min(ms, MAX_SERVER_RETRY_MS) : undefined;
}

/**
 * The wait before try `tries` + 1, after `tries` failed in a row (from 1):
 * a random share of `baseMs` doubled at each try, up to `capMs` (or the base,
 * if a server set a longer one). `random` is in [0, 1).
 *
 * ```
 * base 1000, cap 30000:  try 1: [0, 1000)  2: [0, 2000)  3: [0, 4000)  …  6 and on: [0, 30000)
 * ```
 */
export function backoffMs(tries: number, baseMs: number, capMs: number, random: () => number): number {
  const ceiling = Math.min(Math.max(capMs, baseMs), baseMs * 2 ** (tries - 1), LONGEST_TIMER_MS);
  return ceiling > 0 ? random() * ceiling : 0;
}
