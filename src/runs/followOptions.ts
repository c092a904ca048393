// The options of `followRun`, their defaults, and the check each gets where
// the call is made. No Node built-ins.
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { checkDecodeOptions, type DecodeOptions } from '../events/decode/JsonlDecoder.js';
import { above, atLeast, optionError, wholeAtLeast } from '../common/checks.js';
import type { OutageRules } from './Outage.js';

/** Options of `followRun`; the decode options work as in `fromJsonl`, an issue's `line` being the event's index. */
export interface FollowRunOptions extends DecodeOptions {
  /** The `fetch` to send requests with. Default: the global one, looked up at each request. */
  readonly fetch?: typeof fetch;
  /** Headers sent with every request, such as `Authorization`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The index of the last event already held: the follow starts after it. Default: from the first event. */
  readonly after?: number;
  /**
   * The ceiling of the first wait before reconnecting, in milliseconds,
   * doubled at each failed try in a row; each wait is a random share of its
   * ceiling (full jitter). The server's `retry:` field replaces it (up to a
   * minute). Default 1000.
   */
  readonly retryDelayMs?: number;
  /** The most the ceiling of a wait grows to, in milliseconds. Default 30,000. */
  readonly maxRetryDelayMs?: number;
  /**
   * Milliseconds without a connection, counted from the first failure after
   * the last new event and paused while a connection is up, after which the
   * follow errors with `FollowGaveUpError`. Default 300,000 (5 minutes):
   * longer than a phone changing networks or a server restarted by a deploy.
   */
  readonly giveUpAfterMs?: number;
  /**
   * Failed connections in a row (no new event in between) after which the
   * follow errors with `FollowGaveUpError`, whatever failed: a refused
   * request, a 5xx, a body that broke, went silent, ended without `end` or
   * held a message too long. A bound beside `giveUpAfterMs`. Default: none.
   */
  readonly maxRetries?: number;
  /**
   * Milliseconds without a byte from the hub (no event, no heartbeat) after
   * which the connection is taken for lost and a new one is made: one that
   * went half-open (a sleeping laptop, a NAT that forgot it) never ends on its
   * own. Default 45,000, three of the hub's heartbeats; `Infinity` waits for ever.
   */
  readonly idleTimeoutMs?: number;
  /**
   * What a run restarted on another worker (the hub's `RunRestartedError`)
   * does to the follow: `'error'`, the default, ends it with that error;
   * `'refollow'` (`RefollowRunOptions`) reads the run again.
   */
  readonly onRestart?: 'error';
}

/**
 * `followRun`'s options for a follower that reads a run restarted on another
 * worker again from its start, having emitted a `RunRestart` first: its
 * Observable is typed to say so.
 */
export interface RefollowRunOptions extends Omit<FollowRunOptions, 'onRestart'> {
  /** Read a restarted run again from its start, after a `RunRestart`. */
  readonly onRestart: 'refollow';
}

/** Where a follow's timers and jitter come from: RxJS's async scheduler and `Math.random` in use, stand-ins in tests. */
export interface FollowEnvironment {
  readonly scheduler: SchedulerLike;
  /** A number in [0, 1). */
  readonly random: () => number;
}

export const liveEnvironment: FollowEnvironment = { scheduler: asyncScheduler, random: Math.random };

/** The options with their defaults, checked once per `followRun` call. */
export interface FollowSettings
  extends
    OutageRules,
    Pick<FollowRunOptions, 'headers' | 'keepUnknown' | 'strict' | 'onDiagnostic'>,
    FollowEnvironment {
  readonly fetch: typeof fetch;
  readonly maxLineBytes: number;
  readonly after: number;
  readonly idleTimeoutMs: number;
  readonly refollow: boolean;
}

/** Three of the heartbeats `runsHandler` sends every 15 s. */
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

/** The options with their defaults; a wrong value is a `TypeError` naming it, thrown where the call is. */
export function settingsOf(
  options: FollowRunOptions | RefollowRunOptions,
  environment: FollowEnvironment,
): FollowSettings {
  const { maxLineBytes } = checkDecodeOptions(options, 'followRun');
  const { after = -1, onRestart = 'error' } = options as { after?: number; onRestart?: string };
  wholeAtLeast('followRun', 'after', after, -1);
  if (onRestart !== 'error' && onRestart !== 'refollow') {
    throw optionError('followRun', 'onRestart', "'error' or 'refollow'", onRestart);
  }
  return {
    ...options,
    ...environment,
    // Called unbound: a browser's fetch refuses another `this`; the global is looked up at each request.
    fetch: (input, init) => (options.fetch ?? globalThis.fetch)(input, init),
    maxLineBytes,
    after,
    retryDelayMs: atLeast('followRun', 'retryDelayMs', options.retryDelayMs ?? 1000, 0),
    maxRetryDelayMs: atLeast('followRun', 'maxRetryDelayMs', options.maxRetryDelayMs ?? 30_000, 0),
    giveUpAfterMs: above('followRun', 'giveUpAfterMs', options.giveUpAfterMs ?? 300_000, 0),
    maxRetries: atLeast('followRun', 'maxRetries', options.maxRetries ?? Infinity, 0),
    idleTimeoutMs: above('followRun', 'idleTimeoutMs', options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, 0),
    refollow: onRestart === 'refollow',
  };
}
