import type { NatsConnection } from '@nats-io/transport-node';
import { Observable } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events.js';
import { AttemptWriter } from './AttemptWriter.js';
import { DEFAULTS } from './defaults.js';
import { checkAttempt, checkRunId, layoutOf, type LayoutOptions } from './layout.js';
import type { FinishedRecord, StartedRecord } from './records.js';

/** Options of `publishTo`. */
export interface PublishToOptions extends LayoutOptions {
  /** The attempt these events belong to. Default 1; a worker numbers its attempts from the run's status. */
  readonly attempt?: number;
  /** Who runs it, written in the `started` record (a worker writes `host:pid`). */
  readonly worker?: string;
  /** The prompt, written in the `started` record for dashboards. */
  readonly prompt?: string;
  /** Publishes awaiting their ack at most. Default 256. */
  readonly maxPendingAcks?: number;
  /**
   * Bytes of events held while the broker is behind, at most (default 64 MiB):
   * a run's output cannot be paused, so past this the run fails with a `BrokerError`.
   */
  readonly maxBufferBytes?: number;
  /** Milliseconds to wait for one ack. Default 5000. */
  readonly ackTimeoutMs?: number;
  /** How long a publish is retried (same `Nats-Msg-Id`, so never stored twice) before the run fails. Default 30 s. */
  readonly retryForMs?: number;
  /**
   * The stream sequence of the run's last status message when this attempt
   * was chosen, 0 for none. The `started` record is stored only while that is
   * still the last, and the `finished` record only while `started` is: of two
   * writers of one run, the one whose attempt was replaced fails with
   * `AttemptSupersededError` and changes nothing. Default: read when
   * subscribed; a run whose status has a later attempt errors at once with
   * `AttemptSupersededError`, and one that has ended with `BrokerError` or
   * `DeadLetterError`.
   */
  readonly lastStatusSequence?: number;
  /** The stream sequence of the request this attempt runs, written in its `started` record (workers set it). */
  readonly requestSequence?: number;
  /**
   * Called once the `started` record is stored, with its stream sequence.
   * Events wait behind it; a worker lets its CLI start only then.
   */
  readonly onStarted?: (record: StartedRecord, sequence: number) => void;
  /** Called once the `finished` record is stored: the attempt is then durable, whatever a consumer does. */
  readonly onFinished?: (record: FinishedRecord) => void;
}

/**
 * Writes each event of a run to JetStream as it passes, and passes it on.
 * Before the first event a `started` record is written, after
 * the last one a `finished` record: `completed`, or the error with its class,
 * message, exit code, signal, stderr tail and thread id. A consumer of
 * `fromJetStream` then ends as this subscriber does.
 *
 * Every event goes to `<prefix>.run.<runId>.<attempt>` with its JSON line as
 * payload and the headers `EvoSci-Run-Id`, `EvoSci-Attempt`, `EvoSci-Seq` and
 * `Nats-Msg-Id` (`<runId>.<attempt>.<seq>`). At most `maxPendingAcks`
 * publishes await their ack; events wait in order behind them, at most
 * `maxBufferBytes` of them. A publish that cannot be stored within
 * `retryForMs` unsubscribes the source (which stops a run) and errors with a
 * `BrokerError`. Unsubscribing stops the source and writes no record: a
 * worker's next attempt supersedes the half one.
 *
 * ```
 * source:    --a----b--c---|
 * JetStream:  S--a----b--c----F        (S started, F finished, after every event's ack)
 * output:    --a----b--c------|        (completes, or errors as the source did, once F is stored)
 * ```
 *
 * ```ts
 * run({ prompt }).pipe(publishTo(nc, 'run-42')).subscribe();
 * ```
 */
export function publishTo(
  nc: NatsConnection,
  runId: string,
  options: PublishToOptions = {},
): <T extends EvoEvent | UnknownEvent>(source: Observable<T>) => Observable<T> {
  checkRunId(runId);
  const attempt = options.attempt ?? 1;
  checkAttempt(attempt);
  const maxPendingAcks = options.maxPendingAcks ?? DEFAULTS.maxPendingAcks;
  const maxBufferBytes = options.maxBufferBytes ?? DEFAULTS.maxBufferBytes;
  if (!(Number.isInteger(maxPendingAcks) && maxPendingAcks >= 1))
    throw new TypeError(`maxPendingAcks must be an integer ≥ 1, got ${String(maxPendingAcks)}`);
  if (!(maxBufferBytes >= 1)) throw new TypeError(`maxBufferBytes must be ≥ 1, got ${String(maxBufferBytes)}`);
  const plan = {
    layout: layoutOf(options),
    runId,
    attempt,
    worker: options.worker,
    prompt: options.prompt,
    lastStatusSequence: options.lastStatusSequence,
    requestSequence: options.requestSequence,
    maxPendingAcks,
    maxBufferBytes,
    timing: {
      ackTimeoutMs: options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs,
      retryForMs: options.retryForMs ?? DEFAULTS.retryForMs,
    },
    onStarted: options.onStarted,
    onFinished: options.onFinished,
  };
  return <T extends EvoEvent | UnknownEvent>(source: Observable<T>) =>
    new Observable<T>((subscriber) => {
      const writer = new AttemptWriter<T>(nc, plan, subscriber);
      writer.start(source);
      return () => writer.stop();
    });
}
