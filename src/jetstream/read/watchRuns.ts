import type { NatsConnection } from '@nats-io/transport-node';
import { Observable } from 'rxjs';
import { DecodeIssue } from '../../events/decode/decodeLine.js';
import { OrderedReader } from './OrderedReader.js';
import { layoutOf, type LayoutOptions } from '../wire/layout.js';
import { decodeRecord, type StatusRecord } from '../wire/records.js';

/** Options of `watchRuns`. */
export interface WatchRunsOptions extends LayoutOptions {
  /** `new` (default): records written from now on; `start`: every record the stream still holds, then new ones. */
  readonly from?: 'new' | 'start';
  /** Called for a message on a status subject that is not a status record. */
  readonly onDiagnostic?: (issue: DecodeIssue) => void;
}

/**
 * Every run's status records as they are written, for dashboards: an attempt
 * `started` (with its worker and prompt), `finished` (completed, or failed
 * with its error; `cancelled` says what `cancelRun` stopped), `dead-letter`
 * (with the reason). Never completes;
 * unsubscribing deletes its consumer. Errors with `BrokerError` if the
 * connection closes.
 *
 * ```
 * records: --S(a,1)--S(b,1)----F(a,1)--S(b,2)--F(b,2)-->
 * ```
 *
 * ```ts
 * watchRuns(nc).subscribe((r) => console.log(r.runId, r.record, r.record === 'finished' ? r.outcome : ''));
 * ```
 */
export function watchRuns(nc: NatsConnection, options: WatchRunsOptions = {}): Observable<StatusRecord> {
  const layout = layoutOf(options);
  return new Observable<StatusRecord>((subscriber) => {
    let following: OrderedReader | undefined;
    let closed = false;
    OrderedReader.start(
      nc,
      layout.eventsStream,
      layout.allStatusSubjects,
      { from: options.from ?? 'new' },
      (message) => {
        const record = decodeRecord(message.data);
        try {
          if (record) subscriber.next(record);
          else
            options.onDiagnostic?.(
              new DecodeIssue(
                0,
                message.string(),
                `message ${message.seq} on ${message.subject} is not a status record`,
              ),
            );
        } catch (err) {
          subscriber.error(err);
        }
      },
      (error) => subscriber.error(error),
    ).then(
      (f) => {
        following = f;
        if (closed) f.stop();
      },
      (err: unknown) => subscriber.error(err),
    );
    return () => {
      closed = true;
      following?.stop();
    };
  });
}
