import type { NatsConnection } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import type { JetStreamLayout } from '../wire/layout.js';
import { decodeRecord, type DeadLetterRecord, type FinishedRecord, type StatusRecord } from '../wire/records.js';
import { OrderedReader, type FollowStart } from './OrderedReader.js';
import { readerSettings } from './readerSettings.js';

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
   * `Date.now()` time) passes without one. Making the reader's consumer (at
   * first, or again once lost) is tried until `startUntil` while the broker
   * does not answer; a broker that fails otherwise rejects with `BrokerError`.
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
      const target = {
        stream: this.layout.eventsStream,
        filter: this.layout.statusSubject(this.runId),
        onMessage: (message: JsMsg) => {
          const ended = endOf(decodeRecord(message.data));
          if (ended) end(ended);
        },
        onEnd: end,
      };
      const start: FollowStart =
        fromSequence === undefined ? { from: 'start' } : { from: 'sequence', sequence: fromSequence };
      const giveUpAfterMs = Math.max(0, Math.min(startUntil, deadline) - Date.now());
      this.following = OrderedReader.open(this.nc, target, start, {
        ...readerSettings('cancelRun', {}),
        giveUpAfterMs,
      });
    });
  }
}
