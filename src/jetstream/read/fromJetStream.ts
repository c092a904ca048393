import type { NatsConnection } from '@nats-io/transport-node';
import { Observable } from 'rxjs';
import { checkDecodeOptions, type DecodeOptions } from '../../events/decode/JsonlDecoder.js';
import type { EvoEvent, UnknownEvent } from '../../events/codecs.js';
import { DEFAULTS } from '../wire/defaults.js';
import { checkRunId, layoutOf, type LayoutOptions } from '../wire/layout.js';
import type { EventPosition } from '../wire/positions.js';
import { RunReader } from './RunReader.js';
import { readerSettings, type ReaderOptions } from './readerSettings.js';
import { atLeast } from '../../common/checks.js';
import type { FlowControl } from '../../common/FlowControl.js';

/** Options of `fromJetStream`: the layout, the decoding options of `fromJsonl`, and how its reader keeps going. */
export interface FromJetStreamOptions extends LayoutOptions, DecodeOptions, ReaderOptions {
  /** Go on after this event (from `positionOf`) instead of replaying the attempt from its start. */
  readonly after?: EventPosition;
  /**
   * Bytes of events held while one before them is missing (stored out of
   * order after a publish retried across a broker restart), at most, each
   * message counted with its headers and subject, which holding it keeps.
   * Past it the Observable errors with `BrokerError`. Default 64 MiB.
   */
  readonly maxHeldBytes?: number;
  /**
   * The tap of whoever takes the events, as `run({ flow })` takes it: while
   * it is paused the reader asks the broker for no more (a pull asked for
   * before is still taken: at most 128 messages), and goes on with the next
   * event once it is resumed. Without it the reader takes the run as fast as
   * the broker sends it.
   */
  readonly flow?: FlowControl | undefined;
}

/**
 * One run's events from JetStream as a cold Observable, as `run()` would
 * emit them: each subscription replays the run's latest attempt from its
 * start (or from `after`), then follows it live, and completes or errors with
 * the same `EvoSciError` subclass, message and details at its `finished`
 * record. A run not started yet is waited for.
 *
 * Each event is emitted exactly once and in order: events are read by their
 * `EvoSci-Seq` (and the parts of a large one by their `EvoSci-Part`), so a
 * repeat is dropped and one stored out of order is held until its turn.
 * Payloads are decoded as lines of `fromJsonl`, an event in parts as one
 * line fed part by part, so that no more than `maxLineBytes` of it is held:
 * a payload that is not an event is an `onDiagnostic` issue (its `line` is
 * the event's sequence), or a `DecodeError` with `strict`, and so is an event
 * whose messages disagree on its parts (their count, or whole and in parts),
 * which is dropped, never joined. A run a limit
 * stopped errors with the `StorageLimitError` that names it.
 *
 * A new attempt never mixes into the one being followed: if the worker of
 * the followed attempt dies and the request is run again, the Observable
 * errors with `AttemptSupersededError`, and a new subscription follows the
 * new attempt from its start. A run `cancelRun` ended errors with
 * `CancelledError`, at once if it never started. A dead-lettered run errors with
 * `DeadLetterError`; a connection that closes, with `BrokerError`, and so
 * does a run whose attempt's start the stream's limits have removed.
 * Unsubscribing deletes the consumer from the server.
 *
 * On a cluster the reader never waits in silence: a stream without a leader
 * for a while is asked again, a consumer lost with its server (two heartbeats
 * missed) or stuck on a replica that is behind is made again from the message
 * after the last one read, and a run that looks incomplete is read again on
 * another server's copy before any event is called missing; each time is
 * reported to `onRetrying`. It errors only when it cannot go on: after
 * `giveUpAfterMs` of tries, or when every copy lacks the events.
 *
 * ```
 * JetStream: S1-a-b-(worker dies)-S2-a-b-c-F
 * first:     --a-b-----------------#            (AttemptSupersededError)
 * second:                           --a-b-c-|   (subscribed after S2)
 * ```
 *
 * ```ts
 * fromJetStream(nc, runId, { onDiagnostic: console.warn })
 *   .pipe(ofType('text'))
 *   .subscribe((e) => process.stdout.write(e.content));
 * ```
 */
export function fromJetStream(
  nc: NatsConnection,
  runId: string,
  options: FromJetStreamOptions & { keepUnknown: true },
): Observable<EvoEvent | UnknownEvent>;
export function fromJetStream(nc: NatsConnection, runId: string, options?: FromJetStreamOptions): Observable<EvoEvent>;
export function fromJetStream(
  nc: NatsConnection,
  runId: string,
  options: FromJetStreamOptions = {},
): Observable<EvoEvent | UnknownEvent> {
  checkRunId(runId);
  const { maxLineBytes } = checkDecodeOptions(options, 'fromJetStream');
  const { after } = options;
  if (after !== undefined && after.runId !== runId)
    throw new TypeError(`after is a position in run ${after.runId}, not ${runId}`);
  const maxHeldBytes = options.maxHeldBytes ?? DEFAULTS.maxHeldBytes;
  atLeast('fromJetStream', 'maxHeldBytes', maxHeldBytes, 0);
  const plan = {
    layout: layoutOf(options),
    runId,
    after,
    keepUnknown: options.keepUnknown ?? false,
    maxLineBytes,
    maxHeldBytes,
    strict: options.strict,
    onDiagnostic: options.onDiagnostic,
    settings: readerSettings('fromJetStream', options),
    flow: options.flow,
  };
  return new Observable<EvoEvent | UnknownEvent>((subscriber) => {
    const reader = new RunReader(nc, plan, subscriber);
    reader.start();
    return () => reader.stop();
  });
}
