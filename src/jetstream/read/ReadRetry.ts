import type { NatsConnection } from '@nats-io/transport-node';
import { doubling, lasting, pause } from '../wire/backoff.js';
import { BrokerError, lookupError } from '../wire/errors.js';
import type { ReaderSettings } from './readerSettings.js';

/**
 * A reader's broker calls tried until they answer: a failure that may pass
 * (no answer in time, no leader while one is elected, no responders) is
 * reported to `onRetrying` and tried again after a pause that doubles from
 * 100 ms to 2 s, for up to `giveUpAfterMs` from the first failure; a lasting
 * one (no such stream, a permission the user lacks), a closed connection, or
 * that time spent, rejects with the `BrokerError` that says which.
 */
export class ReadRetry {
  constructor(
    private readonly nc: NatsConnection,
    private readonly settings: ReaderSettings,
  ) {}

  /** Says that the reader tries again: what happened, as the `BrokerError` it is. */
  report(error: BrokerError): void {
    this.settings.onRetrying?.(error);
  }

  /**
   * `call` until it answers. `what` says what it does, for the error;
   * `going()` turning false (the reader stopped, or moved on) stops the tries,
   * with the last failure.
   */
  async call<T>(what: string, call: () => Promise<T>, going: () => boolean): Promise<T> {
    const since = Date.now();
    const delays = doubling(100, 2000);
    for (;;) {
      try {
        return await call();
      } catch (err) {
        const error = err instanceof BrokerError ? err : lookupError(this.nc, what, err);
        if (this.nc.isClosed() || lasting(err) || !going()) throw error;
        const spent = Date.now() - since;
        if (spent >= this.settings.giveUpAfterMs)
          throw new BrokerError(`${error.message}; gave up after ${spent} ms of tries`, { cause: err });
        this.report(error);
        await pause(delays.next().value);
        if (!going()) throw error;
      }
    }
  }
}
