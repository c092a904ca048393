import type { NatsConnection } from '@nats-io/transport-node';
import { Observable } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../../events/codecs.js';
import type { FlowControl } from '../../common/FlowControl.js';
import { AttemptWriter, type AttemptPlan } from './AttemptWriter.js';
import { DEFAULTS } from '../wire/defaults.js';
import { checkAttempt, checkRunId, layoutOf, type LayoutOptions } from '../wire/layout.js';
import type { FinishedRecord, StartedRecord } from '../wire/records.js';
import { atLeast, optionError, wholeAtLeast } from '../../common/checks.js';

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
   * Bytes of publishes awaiting their ack at most, past the first. Default
   * 2 MiB: what is sent waits its turn on the link before its ack can come, so
   * on a slow link this should be less than the link moves in `ackTimeoutMs`.
   */
  readonly maxPendingBytes?: number;
  /**
   * Bytes of events held while the broker is behind, at most (default 64 MiB):
   * past this the run fails with a `BrokerError`. With `flow`, the source is
   * paused long before.
   */
  readonly maxBufferBytes?: number;
  /**
   * The tap of the source, as `run({ flow })` takes it: paused once more than
   * `highWaterBytes` of events await storage, resumed below half of that, so
   * that a broker that falls behind slows the CLI down (its stdout is no
   * longer read, and it waits on its writes) instead of failing the run.
   * `serveRuns` gives each run one of its own.
   */
  readonly flow?: FlowControl;
  /** Bytes awaiting storage above which `flow` is paused. Default 8 MiB, at most half of `maxBufferBytes`. */
  readonly highWaterBytes?: number;
  /**
   * Bytes of events (as JSON lines) one attempt may store. Past it the source
   * is stopped and the run fails with a `StorageLimitError` naming the limit,
   * recorded in its `finished` record. Default: no cap.
   */
  readonly maxRunBytes?: number;
  /** Milliseconds to wait for one ack. Default 5000. */
  readonly ackTimeoutMs?: number;
  /** How long a publish is retried (same `Nats-Msg-Id`, so never stored twice) before the run fails. Default 30 s. */
  readonly retryForMs?: number;
  /**
   * Milliseconds a publish goes without an answer before it is sent again,
   * same `Nats-Msg-Id`. Default 1000: a publish lost in a leader change
   * costs about this, where waiting out `ackTimeoutMs` would cost 5 s. A
   * publish is also sent again as soon as a later one of the run is stored.
   * `Infinity`: never sent again before `ackTimeoutMs`.
   */
  readonly resendAfterMs?: number;
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
 * `Nats-Msg-Id` (`<runId>.<attempt>.<seq>`). An event longer than 16 KiB
 * (or than the server's `max_payload` less room for headers, if that is
 * less) goes as parts on the same subject, each with the event's
 * `EvoSci-Seq`, `EvoSci-Part: <part>/<parts>` and an id of its own
 * (`<runId>.<attempt>.<seq>.<part>`); `fromJetStream` joins them. At most
 * `maxPendingAcks` publishes await their ack; events wait in order behind
 * them, at most `maxBufferBytes` of them, and with `flow` the source is
 * paused long before. A publish that cannot be stored within `retryForMs`
 * unsubscribes the source (which stops a run) and errors with a
 * `BrokerError`. Unsubscribing stops the source and writes no record: a
 * worker's next attempt supersedes the half one.
 *
 * A limit on what the run may store stops the source and ends the run with a
 * `StorageLimitError` naming it, recorded in its `finished` record where the
 * stream has room for it: a full stream (`eventsMaxBytes`), its
 * `eventsMaxAgeMs` (the run is stopped before its `started` record would be
 * removed), a `started` record removed all the same, or `maxRunBytes`.
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
  return writeAttempt(nc, {
    ...writeLimitsOf(options, 'publishTo'),
    layout: layoutOf(options),
    runId,
    attempt,
    worker: options.worker,
    prompt: options.prompt,
    lastStatusSequence: options.lastStatusSequence,
    requestSequence: options.requestSequence,
    flow: options.flow,
    onStarted: options.onStarted,
    onFinished: options.onFinished,
  });
}

/** The options of `publishTo` a worker takes for its runs (`ServeRunsOptions.publish`). */
export type WorkerPublishOptions = Pick<
  PublishToOptions,
  | 'maxPendingAcks'
  | 'maxPendingBytes'
  | 'maxBufferBytes'
  | 'highWaterBytes'
  | 'maxRunBytes'
  | 'ackTimeoutMs'
  | 'retryForMs'
  | 'resendAfterMs'
>;

/** How an attempt's writes are bounded and timed, checked and with their defaults. */
export type WriteLimits = Pick<
  AttemptPlan,
  'maxPendingAcks' | 'maxPendingBytes' | 'maxBufferBytes' | 'maxRunBytes' | 'highWaterBytes' | 'timing'
>;

/**
 * The limits and timing of `options`, checked and with their defaults: once
 * per call, or once per worker. A mistake names `fn` and the option, after `within`.
 */
export function writeLimitsOf(options: WorkerPublishOptions, fn: string, within = ''): WriteLimits {
  const maxPendingAcks = wholeAtLeast(
    fn,
    `${within}maxPendingAcks`,
    options.maxPendingAcks ?? DEFAULTS.maxPendingAcks,
    1,
  );
  const maxBufferBytes = atLeast(fn, `${within}maxBufferBytes`, options.maxBufferBytes ?? DEFAULTS.maxBufferBytes, 1);
  const highWaterBytes = options.highWaterBytes ?? Math.min(DEFAULTS.highWaterBytes, maxBufferBytes / 2);
  if (!(highWaterBytes >= 1 && highWaterBytes <= maxBufferBytes))
    throw optionError(fn, `${within}highWaterBytes`, 'from 1 to maxBufferBytes', highWaterBytes);
  return {
    maxPendingAcks,
    maxPendingBytes: atLeast(fn, `${within}maxPendingBytes`, options.maxPendingBytes ?? DEFAULTS.maxPendingBytes, 1),
    maxBufferBytes,
    maxRunBytes: atLeast(fn, `${within}maxRunBytes`, options.maxRunBytes ?? Infinity, 1),
    highWaterBytes,
    timing: {
      ackTimeoutMs: options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs,
      retryForMs: options.retryForMs ?? DEFAULTS.retryForMs,
      resendAfterMs: atLeast(fn, `${within}resendAfterMs`, options.resendAfterMs ?? DEFAULTS.resendAfterMs, 1),
    },
  };
}

/** `publishTo` of a plan already checked: what a worker runs each attempt through. */
export function writeAttempt(
  nc: NatsConnection,
  plan: AttemptPlan,
): <T extends EvoEvent | UnknownEvent>(source: Observable<T>) => Observable<T> {
  return <T extends EvoEvent | UnknownEvent>(source: Observable<T>) =>
    new Observable<T>((subscriber) => {
      const writer = new AttemptWriter<T>(nc, plan, subscriber);
      writer.start(source);
      return () => writer.stop();
    });
}
