import { headers, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiError, type PubAck } from '@nats-io/jetstream';
import { Observable, type Subscription } from 'rxjs';
import { toJsonl } from '../decode/jsonl.js';
import type { EvoEvent, UnknownEvent } from '../events.js';
import { AckCollector, StoreRefusal } from './acks.js';
import { AttemptSupersededError, BrokerError, StatusMovedError } from './errors.js';
import { checkAttempt, checkRunId, clientsOf, layoutOf, serverOf, type LayoutOptions } from './layout.js';
import { encodeRecord, Headers, serializeError, type FinishedRecord, type StartedRecord } from './records.js';
import { readStatus } from './status.js';

/** Options of `publishTo`. */
export interface PublishToOptions extends LayoutOptions {
  /** The attempt these events belong to. Default 1; a worker passes the request's delivery count. */
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
   * `AttemptSupersededError` and changes nothing. Without it the `started`
   * record is stored unconditionally, and the `finished` one still only while
   * `started` is the last.
   */
  readonly lastStatusSequence?: number;
  /** The stream sequence of the request this attempt runs, written in its `started` record (workers set it). */
  readonly requestSequence?: number;
  /** Called once the `finished` record is stored: the attempt is then durable, whatever a consumer does. */
  readonly onFinished?: (record: FinishedRecord) => void;
}

/** The header JetStream de-duplicates on. */
const MSG_ID = 'Nats-Msg-Id';
/** The header that makes a publish conditional on the last sequence of its subject. */
const EXPECTED_LAST_SUBJECT_SEQUENCE = 'Nats-Expected-Last-Subject-Sequence';
/** JetStream's error code for a conditional publish whose subject has moved on. */
const WRONG_LAST_SEQUENCE = 10071;

function isWrongLastSequence(err: unknown): boolean {
  return (err instanceof StoreRefusal || err instanceof JetStreamApiError) && err.code === WRONG_LAST_SEQUENCE;
}

const DEFAULTS = {
  attempt: 1,
  maxPendingAcks: 256,
  maxBufferBytes: 64 * 1024 * 1024,
  ackTimeoutMs: 5000,
  retryForMs: 30_000,
} as const;

/** What a publish needs besides its payload. */
export interface PublishTarget {
  readonly subject: string;
  readonly msgID: string;
  readonly headers: Record<string, string>;
  /** Store only if this is still the last sequence of the subject (0: the subject has none). */
  readonly expectLastSequence?: number;
}

/**
 * Stores one message, retrying on timeouts and while the broker is away with
 * the same `Nats-Msg-Id` (the stream drops a repeat within its duplicate
 * window), until `retryForMs` has passed. A closed connection or an answer
 * that will not change (a JetStream API error, a payload over the server's
 * limit) fails at once.
 */
export function publishStored(
  nc: NatsConnection,
  target: PublishTarget,
  data: Uint8Array,
  timing: { readonly ackTimeoutMs: number; readonly retryForMs: number },
): Promise<PubAck> {
  const h = headers();
  for (const name in target.headers) h.set(name, target.headers[name]!);
  h.set(MSG_ID, target.msgID);
  if (target.expectLastSequence !== undefined) h.set(EXPECTED_LAST_SUBJECT_SEQUENCE, String(target.expectLastSequence));
  const options = { msgID: target.msgID, headers: h, timeout: timing.ackTimeoutMs };
  // Most publishes succeed at once: only a failure enters the retry loop, through the client's own js.publish.
  let first: Promise<PubAck>;
  try {
    first = AckCollector.of(nc).publish(target.subject, data, h, timing.ackTimeoutMs);
  } catch (err) {
    // A closed connection cannot even subscribe: fail as a promise, like every other failure.
    first = Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  return first.catch((err: unknown) => retryPublish(nc, target, data, options, timing, err));
}

/** The slow path of `publishStored`: wait, publish again, until it is stored or cannot be. */
async function retryPublish(
  nc: NatsConnection,
  target: PublishTarget,
  data: Uint8Array,
  options: { msgID: string; headers: ReturnType<typeof headers>; timeout: number },
  timing: { readonly ackTimeoutMs: number; readonly retryForMs: number },
  firstFailure: unknown,
): Promise<PubAck> {
  const { js } = clientsOf(nc);
  const deadline = Date.now() + timing.retryForMs;
  if (isWrongLastSequence(firstFailure)) {
    throw new StatusMovedError(`${target.subject} moved past ${target.expectLastSequence}`, { cause: firstFailure });
  }
  if (/refused/.test((firstFailure as Error)?.message ?? '')) {
    // The stream's own refusal: ask once more through the client, which says exactly why.
    try {
      return await js.publish(target.subject, data, options);
    } catch (err) {
      if (isWrongLastSequence(err)) throw new StatusMovedError(`${target.subject} moved on`, { cause: err });
      firstFailure = err;
    }
  }
  let delay = 50;
  let err = firstFailure;
  for (;;) {
    const message = (err as Error)?.message ?? String(err);
    if (nc.isClosed())
      throw new BrokerError(`could not store ${target.msgID}: the connection to ${serverOf(nc)} is closed`, {
        cause: err,
      });
    const permanent = err instanceof JetStreamApiError || /payload|invalid/i.test(`${(err as Error)?.name} ${message}`);
    if (permanent || Date.now() + delay > deadline) {
      const why = permanent ? message : `no ack within ${timing.retryForMs} ms (${message})`;
      throw new BrokerError(`could not store ${target.msgID} on ${serverOf(nc)} in subject ${target.subject}: ${why}`, {
        cause: err,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 1000);
    try {
      return await js.publish(target.subject, data, options);
    } catch (failure) {
      // A retry after a lost ack is answered as a duplicate first, so this is another writer's record.
      if (isWrongLastSequence(failure)) throw new StatusMovedError(`${target.subject} moved on`, { cause: failure });
      err = failure;
    }
  }
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
  const layout = layoutOf(options);
  const attempt = options.attempt ?? DEFAULTS.attempt;
  checkAttempt(attempt);
  const maxPendingAcks = options.maxPendingAcks ?? DEFAULTS.maxPendingAcks;
  const maxBufferBytes = options.maxBufferBytes ?? DEFAULTS.maxBufferBytes;
  if (!(Number.isInteger(maxPendingAcks) && maxPendingAcks >= 1))
    throw new TypeError(`maxPendingAcks must be an integer ≥ 1, got ${String(maxPendingAcks)}`);
  if (!(maxBufferBytes >= 1)) throw new TypeError(`maxBufferBytes must be ≥ 1, got ${String(maxBufferBytes)}`);
  const timing = {
    ackTimeoutMs: options.ackTimeoutMs ?? DEFAULTS.ackTimeoutMs,
    retryForMs: options.retryForMs ?? DEFAULTS.retryForMs,
  };
  const eventSubject = layout.attemptSubject(runId, attempt);
  const statusSubject = layout.statusSubject(runId);
  const eventHeaders = (seq: number) => ({
    [Headers.runId]: runId,
    [Headers.attempt]: String(attempt),
    [Headers.sequence]: String(seq),
  });
  const recordTarget = (record: 'started' | 'finished', expectLastSequence: number | undefined): PublishTarget => ({
    subject: statusSubject,
    msgID: `${runId}.${attempt}.${record}`,
    headers: { [Headers.runId]: runId, [Headers.attempt]: String(attempt), [Headers.record]: record },
    ...(expectLastSequence === undefined ? {} : { expectLastSequence }),
  });
  /** What a refused status write means: another attempt (or the run's end) was written meanwhile. */
  const superseded = async (err: unknown): Promise<unknown> => {
    if (!(err instanceof StatusMovedError)) return err;
    const latest = await readStatus(nc, layout, runId).catch(() => undefined);
    const next = latest?.record && latest.record.record !== 'dead-letter' ? latest.record.attempt : attempt + 1;
    return new AttemptSupersededError(runId, attempt, Math.max(next, attempt + 1), { cause: err });
  };
  return <T extends EvoEvent | UnknownEvent>(source: Observable<T>) =>
    new Observable<T>((subscriber) => {
      /** Payloads not yet sent, in order, from `head`; `inFlight` more await their ack. */
      let waiting: (Uint8Array | undefined)[] = [];
      let head = 0;
      /** The sequence of `waiting[head]`. */
      let headSeq = 1;
      let inFlight = 0;
      /** Every event up to this one is stored; `storedAbove` holds the ones stored past a gap. */
      let storedThrough = 0;
      const storedAbove = new Set<number>();
      let heldBytes = 0;
      let seq = 0;
      let startSequence: number | undefined;
      let ended: { readonly error?: unknown; readonly failed: boolean } | undefined;
      let stopped = false;
      let finishing = false;
      // Assigned once the source is subscribed; the handlers above may run before that.
      // eslint-disable-next-line prefer-const
      let sourceSubscription: Subscription | undefined;

      /** Ends the run with a broker failure; tells the remote side if the broker still answers. */
      const fail = (err: unknown) => {
        if (stopped) return;
        stopped = true;
        sourceSubscription?.unsubscribe();
        if (startSequence === undefined || nc.isClosed()) return subscriber.error(err);
        // Only the events stored without a gap count: a consumer then ends at the error, not at a hole.
        const record = { ...finishedRecord({ error: err, failed: true }), events: storedThrough };
        void publishStored(nc, recordTarget('finished', startSequence), encodeRecord(record), {
          ackTimeoutMs: timing.ackTimeoutMs,
          retryForMs: 0,
        })
          .then(() => options.onFinished?.(record))
          .catch(() => undefined)
          .finally(() => subscriber.error(err));
      };

      /** A status write failed: superseded (nothing more is written), or the broker failed. */
      const refused = (err: unknown) => {
        if (!(err instanceof StatusMovedError)) return fail(err);
        if (stopped) return;
        stopped = true;
        sourceSubscription?.unsubscribe();
        void superseded(err).then((error) => subscriber.error(error));
      };

      const finishedRecord = (end: { readonly error?: unknown; readonly failed: boolean }): FinishedRecord => ({
        record: 'finished',
        runId,
        attempt,
        at: new Date().toISOString(),
        events: seq,
        startSequence: startSequence ?? 0,
        outcome: end.failed ? 'failed' : 'completed',
        ...(end.failed ? { error: serializeError(end.error) } : {}),
        ...(options.worker === undefined ? {} : { worker: options.worker }),
      });

      const acked = (data: Uint8Array, stored: number) => () => {
        inFlight--;
        storedAbove.add(stored);
        while (storedAbove.delete(storedThrough + 1)) storedThrough++;
        heldBytes -= data.length;
        if (stopped) return;
        pump();
        finishIfDone();
      };

      const pump = () => {
        while (!stopped && startSequence !== undefined && inFlight < maxPendingAcks && head < waiting.length) {
          const data = waiting[head]!;
          waiting[head++] = undefined;
          const itemSeq = headSeq++;
          inFlight++;
          publishStored(
            nc,
            { subject: eventSubject, msgID: `${runId}.${attempt}.${itemSeq}`, headers: eventHeaders(itemSeq) },
            data,
            timing,
          ).then(acked(data, itemSeq), fail);
        }
        // Reclaim the sent prefix now and then; what waits is bounded by maxBufferBytes.
        if (head > 1024 && head * 2 > waiting.length) {
          waiting = waiting.slice(head);
          head = 0;
        }
      };

      const finishIfDone = () => {
        if (stopped || finishing || !ended || startSequence === undefined || inFlight > 0 || head < waiting.length)
          return;
        finishing = true;
        const end = ended;
        const record = finishedRecord(end);
        publishStored(nc, recordTarget('finished', startSequence), encodeRecord(record), timing).then(() => {
          if (stopped) return;
          stopped = true;
          try {
            options.onFinished?.(record);
          } catch (err) {
            return subscriber.error(err);
          }
          if (end.failed) subscriber.error(end.error);
          else subscriber.complete();
        }, refused);
      };

      const started: StartedRecord = {
        record: 'started',
        runId,
        attempt,
        at: new Date().toISOString(),
        ...(options.worker === undefined ? {} : { worker: options.worker }),
        ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
        ...(options.requestSequence === undefined ? {} : { request: options.requestSequence }),
      };
      publishStored(nc, recordTarget('started', options.lastStatusSequence), encodeRecord(started), timing).then(
        (ack) => {
          startSequence = ack.seq;
          pump();
          finishIfDone();
        },
        refused,
      );

      sourceSubscription = source.subscribe({
        next: (event) => {
          if (stopped) return;
          seq++;
          // Buffer.from takes small strings from Node's pooled slabs, where TextEncoder allocates a buffer each.
          const data: Uint8Array = Buffer.from(toJsonl(event), 'utf8');
          heldBytes += data.length;
          if (heldBytes > maxBufferBytes) {
            return fail(
              new BrokerError(
                `run ${runId}: more than ${maxBufferBytes} bytes of events await storage on ${serverOf(nc)}; the broker is not keeping up`,
              ),
            );
          }
          waiting.push(data);
          pump();
          // Passed on as it passes: the run's own subscriber is not held back by the broker.
          subscriber.next(event);
        },
        error: (error: unknown) => {
          ended = { error, failed: true };
          finishIfDone();
        },
        complete: () => {
          ended = { failed: false };
          finishIfDone();
        },
      });
      if (stopped) sourceSubscription.unsubscribe();

      return () => {
        stopped = true;
        sourceSubscription?.unsubscribe();
      };
    });
}
