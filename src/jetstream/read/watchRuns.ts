import type { NatsConnection } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import { Observable } from 'rxjs';
import { DecodeIssue } from '../../events/decode/decodeLine.js';
import { OrderedReader } from './OrderedReader.js';
import { layoutOf, type LayoutOptions } from '../wire/layout.js';
import { decodeRecord, type StatusRecord } from '../wire/records.js';
import { readerSettings, type ReaderOptions } from './readerSettings.js';

/** Options of `watchRuns`: the layout, and how its reader keeps going (as `fromJetStream`'s). */
export interface WatchRunsOptions extends LayoutOptions, ReaderOptions {
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
 * unsubscribing deletes its consumer. A consumer lost or stuck after a
 * leader change is made again from the record after the last one read (see
 * `idleHeartbeatMs`), reported to `onRetrying`. Errors with `BrokerError` if
 * the connection closes, or the stream cannot be reached for `giveUpAfterMs`.
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
  const settings = readerSettings('watchRuns', options);
  return new Observable<StatusRecord>((subscriber) => {
    const target = {
      stream: layout.eventsStream,
      filter: layout.allStatusSubjects,
      onMessage: (message: JsMsg) => {
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
      onEnd: (error: Error) => subscriber.error(error),
    };
    const following = OrderedReader.open(nc, target, { from: options.from ?? 'new' }, settings);
    return () => following.stop();
  });
}
