import type { NatsConnection } from '@nats-io/transport-node';
import { BrokerError } from '../wire/errors.js';
import { retried } from '../wire/backoff.js';
import type { JetStreamLayout } from '../wire/layout.js';
import { decodeRecord, type DeadLetterRecord, type FinishedRecord, type StatusRecord } from '../wire/records.js';
import { OrderedReader } from './OrderedReader.js';

/** A status record that ends a run. */
export type EndRecord = FinishedRecord | DeadLetterRecord;

/** The record, if it ends the run. */
export function endOf(record: StatusRecord | undefined): EndRecord | undefined {
  return record?.record === 'finished' || record?.record === 'dead-letter' ? record : undefined;
}

/** Reads a run's status records from a stream sequence on until one ends the run, or a deadline passes. */
export class EndWatch {
  private following: OrderedReader | undefined;
  private done = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly layout: JetStreamLayout,
    private readonly runId: string,
  ) {}

  /**
   * The record that ends the run, or `undefined` once `deadline` (a
   * `Date.now()` time) passes without one. Starting the reader is tried
   * again until `startUntil` while the broker does not answer; a broker that
   * fails otherwise rejects with `BrokerError`.
   */
  wait(fromSequence: number | undefined, deadline: number, startUntil: number): Promise<EndRecord | undefined> {
    return new Promise<EndRecord | undefined>((resolve, reject) => {
      const end = (outcome: EndRecord | Error | undefined) => {
        if (this.done) return;
        this.done = true;
        clearTimeout(this.timer);
        this.following?.stop();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      this.timer = setTimeout(() => end(undefined), Math.max(0, deadline - Date.now()));
      const start = () =>
        OrderedReader.start(
          this.nc,
          this.layout.eventsStream,
          this.layout.statusSubject(this.runId),
          fromSequence === undefined ? { from: 'start' } : { from: 'sequence', sequence: fromSequence },
          (message) => {
            const ended = endOf(decodeRecord(message.data));
            if (ended) end(ended);
          },
          end,
        );
      // A reader started after the wait ended is stopped at once.
      retried(this.nc, () => (this.done ? Promise.resolve(undefined) : start()), Math.min(startUntil, deadline)).then(
        (following) => {
          this.following = following;
          if (this.done) following?.stop();
        },
        (err: unknown) => end(err instanceof Error ? err : new BrokerError(String(err))),
      );
    });
  }
}
