import { atLeast, optionError } from '../../common/checks.js';
import { DEFAULTS } from '../wire/defaults.js';
import type { BrokerError } from '../wire/errors.js';

/** How a reader keeps going when its consumer is lost, or its stream cannot be reached for a while. */
export interface ReaderOptions {
  /**
   * Milliseconds between the heartbeats of the reader's consumer while it has
   * nothing to deliver, from 500 to 30,000. Two missed (its server went away, and the
   * consumer with it), the consumer is made again from the message after the
   * last one read; one idle that long while the stream's leader holds a
   * message for it (a replica behind, or one that skipped what it holds) is
   * made again on another server. Default 5000.
   */
  readonly idleHeartbeatMs?: number;
  /**
   * Milliseconds a reader tries again to reach its stream (no answer in time,
   * no leader) before it errors with `BrokerError`, counted from the first
   * failure of a series. Default 60,000; `Infinity` never gives up.
   */
  readonly giveUpAfterMs?: number;
  /**
   * Called each time the reader lost its consumer, or could not reach its
   * stream, and tries again: the `BrokerError` says what happened and where.
   * The reader goes on; an error this throws ends it.
   */
  readonly onRetrying?: (error: BrokerError) => void;
}

/** A reader's options with their defaults. */
export interface ReaderSettings {
  readonly idleHeartbeatMs: number;
  readonly giveUpAfterMs: number;
  readonly onRetrying: ((error: BrokerError) => void) | undefined;
}

/** The reader options of `fn`, checked, with their defaults. */
export function readerSettings(fn: string, options: ReaderOptions): ReaderSettings {
  const idleHeartbeatMs = options.idleHeartbeatMs ?? DEFAULTS.idleHeartbeatMs;
  // The bounds the client holds a consumer's heartbeats to.
  if (!(typeof idleHeartbeatMs === 'number' && idleHeartbeatMs >= 500 && idleHeartbeatMs <= 30_000))
    throw optionError(fn, 'idleHeartbeatMs', 'a number from 500 to 30000', idleHeartbeatMs);
  const giveUpAfterMs = atLeast(fn, 'giveUpAfterMs', options.giveUpAfterMs ?? DEFAULTS.readerGiveUpAfterMs, 0);
  return { idleHeartbeatMs, giveUpAfterMs, onRetrying: options.onRetrying };
}
