// The failed connections of a follow since its last new event: how long to
// wait before the next try, and when to stop trying. No Node built-ins.
import { EvoSciError } from '../events/errors.js';
import { backoffMs, serverRetryMs } from './backoff.js';
import { RunHubError } from './errors.js';

/** The bounds of an outage, from `followRun`'s options. */
export interface OutageRules {
  /** The first delay's ceiling, doubled at each try (a server's `retry:` sets another). */
  readonly retryDelayMs: number;
  /** The most a delay's ceiling grows to. */
  readonly maxRetryDelayMs: number;
  /** Time without a connection, since the last new event, after which the follow gives up. */
  readonly giveUpAfterMs: number;
  /** Failed connections in a row, since the last new event, after which the follow gives up. */
  readonly maxRetries: number;
}

/**
 * `followRun` stopped reconnecting: `tries` connections in a row failed,
 * and it went `elapsedMs` without one (`giveUpAfterMs`), or had tried
 * `maxRetries` times, since its last new event. `cause` is the last failure:
 * a lost connection (an `EvoSciError` whose own cause is what `fetch` or the
 * body threw) or the hub's refusal (a `RunHubError` of a 5xx or 429).
 */
export class FollowGaveUpError extends EvoSciError {
  static {
    this.prototype.name = 'FollowGaveUpError';
  }

  /** The last failure: a refused request, an HTTP error, a broken or silent body. */
  declare readonly cause: Error;

  constructor(
    /** The URL it followed. */
    readonly url: string,
    /** The tries in a row that found no connection. */
    readonly tries: number,
    /** The time without a connection since the last new event, in milliseconds. */
    readonly elapsedMs: number,
    cause: Error,
  ) {
    const what = `${tries} ${tries === 1 ? 'try' : 'tries'} in a row and ${durationOf(elapsedMs)} without a connection`;
    super(`followRun: gave up on ${url} after ${what}; the last: ${lastWordsOf(cause, url)}`, { cause });
  }
}

/**
 * One follow's reconnecting, across its connections. Time counts while no
 * connection is up, from the follow's start or the failure of the one that
 * was, and stops when one is answered with an event stream; only a new event
 * ends the outage, so a server that answers and then fails every connection
 * (an oversized message, a body that ends at once) is given up all the same.
 */
export class Outage {
  private tries = 0;
  /** Milliseconds without a connection in the periods that ended since the last new event. */
  private downMs = 0;
  /** Since when no connection has been up; `undefined` while one is. */
  private downSince: number | undefined;
  /** The first delay's ceiling: the option's, until the server's `retry:`. */
  private baseMs: number;

  constructor(
    private readonly rules: OutageRules,
    private readonly url: string,
    now: number,
    private readonly random: () => number,
  ) {
    this.downSince = now;
    this.baseMs = rules.retryDelayMs;
  }

  /** A connection was answered with an event stream: the time without one stops counting. */
  connected(now: number): void {
    if (this.downSince !== undefined) this.downMs += now - this.downSince;
    this.downSince = undefined;
  }

  /** A new event came: the outage, if there was one, is over. */
  progressed(): void {
    this.tries = 0;
    this.downMs = 0;
  }

  /** The server's `retry:` field: the base of the delays from now on, if it is one. */
  serverRetry(ms: number): void {
    this.baseMs = serverRetryMs(ms) ?? this.baseMs;
  }

  /**
   * A connection failed with `cause`: the milliseconds to wait before the
   * next (never past the budget's end, so the last try comes at it), or the
   * error to give up with.
   */
  failed(cause: Error, now: number): number | FollowGaveUpError {
    this.tries++;
    this.downSince ??= now;
    const elapsed = this.downMs + (now - this.downSince);
    const left = this.rules.giveUpAfterMs - elapsed;
    if (left <= 0 || this.tries > this.rules.maxRetries) {
      return new FollowGaveUpError(this.url, this.tries, elapsed, cause);
    }
    return Math.min(backoffMs(this.tries, this.baseMs, this.rules.maxRetryDelayMs, this.random), left);
  }
}

/** A duration as a person reads it: `850 ms`, `4.2 s`, `5 min 3 s`. */
function durationOf(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** What the last failure says, without what the give-up's own message says already. */
function lastWordsOf(cause: Error, url: string): string {
  if (cause instanceof RunHubError) return `${cause.status} ${cause.message}`;
  return cause.message.replace(/^followRun: /, '').replace(` to ${url}`, '');
}
