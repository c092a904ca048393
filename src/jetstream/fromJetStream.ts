import type { NatsConnection } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import { Observable } from 'rxjs';
import { decodeLine, DecodeIssue } from '../decode/decodeLine.js';
import { checkDecodeOptions, type DecodeOptions } from '../decode/JsonlDecoder.js';
import { DecodeError, type EvoSciError } from '../errors.js';
import type { EvoEvent, UnknownEvent } from '../events.js';
import { brokerError } from './ensureStreams.js';
import { AttemptSupersededError, BrokerError, DeadLetterError } from './errors.js';
import { follow, type FollowStart, type Following } from './follow.js';
import { checkRunId, clientsOf, layoutOf, type LayoutOptions } from './layout.js';
import { decodeRecord, deserializeError, Headers, type FinishedRecord, type StatusRecord } from './records.js';

/**
 * Where an event of `fromJetStream` is in its run: pass it as `after` to a
 * new subscription to go on with the next event.
 */
export interface EventPosition {
  readonly runId: string;
  readonly attempt: number;
  /** 1-based position of the event in its attempt (`EvoSci-Seq`). */
  readonly sequence: number;
  /** The stream sequence to read from again so that nothing after this event is missed. */
  readonly resumeFrom: number;
}

/** Options of `fromJetStream`: the layout, and the decoding options of `fromJsonl`. */
export interface FromJetStreamOptions extends LayoutOptions, DecodeOptions {
  /** Go on after this event (from `positionOf`) instead of replaying the attempt from its start. */
  readonly after?: EventPosition;
}

const positions = new WeakMap<object, EventPosition>();

/**
 * The position of an event emitted by `fromJetStream`, `undefined` for any
 * other object. Kept beside the event, which stays the plain wire object.
 *
 * ```ts
 * let last: EventPosition | undefined;
 * fromJetStream(nc, id).pipe(tap((e) => (last = positionOf(e)))).subscribe();
 * // later: fromJetStream(nc, id, { after: last })
 * ```
 */
export function positionOf(event: object): EventPosition | undefined {
  return positions.get(event);
}

/** How many events may arrive ahead of a missing one (after a publish retried across a broker restart). */
const MAX_HELD = 10_000;
const text = new TextDecoder();

/**
 * One run's events from JetStream as a cold Observable, as `run()` would
 * emit them: each subscription replays the run's latest attempt from its
 * start (or from `after`), then follows it live, and completes or errors with
 * the same `EvoSciError` subclass, message and details at its `finished`
 * record. A run not started yet is waited for.
 *
 * Each event is emitted exactly once and in order: events are read by their
 * `EvoSci-Seq`, so a repeat is dropped and one stored out of order is held
 * until its turn. Payloads are decoded by `decodeLine`, the codec path of
 * `fromJsonl`: a payload that is not an event is an `onDiagnostic` issue
 * (its `line` is the event's sequence), or a `DecodeError` with `strict`.
 *
 * A new attempt never mixes into the one being followed: if the worker of
 * the followed attempt dies and the request is run again, the Observable
 * errors with `AttemptSupersededError`, and a new subscription follows the
 * new attempt from its start. A dead-lettered run errors with
 * `DeadLetterError`; a connection that closes, with `BrokerError`.
 * Unsubscribing deletes the consumer from the server.
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
  const { maxLineBytes } = checkDecodeOptions(options);
  const layout = layoutOf(options);
  const { after } = options;
  if (after !== undefined && after.runId !== runId)
    throw new TypeError(`after is a position in run ${after.runId}, not ${runId}`);
  const keepUnknown = options.keepUnknown ?? false;
  const runPrefix = `${layout.prefix}.run.${runId}.`;

  return new Observable<EvoEvent | UnknownEvent>((subscriber) => {
    let following: Following | undefined;
    let done = false;
    /** The attempt being emitted; `undefined` until its `started` record is read. */
    let attempt = after?.attempt;
    /** The sequence of the next event to emit. */
    let expected = after ? after.sequence + 1 : 1;
    const held = new Map<number, { data: Uint8Array; streamSequence: number }>();

    const end = (error?: unknown) => {
      if (done) return;
      done = true;
      following?.stop();
      if (error === undefined) subscriber.complete();
      else subscriber.error(error);
    };

    const emit = (sequence: number, data: Uint8Array, resumeFrom: number) => {
      let line = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
      if (line.endsWith('\n')) line = line.slice(0, line.endsWith('\r\n') ? -2 : -1);
      const result =
        line.length > maxLineBytes
          ? new DecodeIssue(sequence, line, `line longer than maxLineBytes (${maxLineBytes}); dropped`)
          : decodeLine(line, sequence, keepUnknown);
      if (result === undefined) return;
      if (result instanceof DecodeIssue) {
        if (options.strict) return end(new DecodeError(result));
        return options.onDiagnostic?.(result);
      }
      positions.set(result, { runId, attempt: attempt!, sequence, resumeFrom });
      subscriber.next(result);
    };

    const onEvent = (message: JsMsg, eventAttempt: number) => {
      // Before the first started record, or from another attempt (a worker thought dead): not ours.
      if (attempt === undefined || eventAttempt !== attempt) return;
      const sequence = Number(message.headers?.get(Headers.sequence));
      if (!(Number.isInteger(sequence) && sequence >= 1)) {
        const issue = new DecodeIssue(
          0,
          text.decode(message.data),
          `message ${message.seq} of stream ${layout.eventsStream} has no ${Headers.sequence} header; dropped`,
        );
        if (options.strict) return end(new DecodeError(issue));
        return options.onDiagnostic?.(issue);
      }
      if (sequence < expected) return; // a repeat
      if (sequence > expected) {
        held.set(sequence, { data: message.data, streamSequence: message.seq });
        if (held.size > MAX_HELD)
          end(
            new BrokerError(
              `run ${runId} attempt ${attempt}: event ${expected} is missing from stream ${layout.eventsStream} while ${held.size} later ones arrived`,
            ),
          );
        return;
      }
      emit(sequence, message.data, held.size === 0 ? message.seq + 1 : lowestHeld());
      expected++;
      for (let next = held.get(expected); next && !done; next = held.get(expected)) {
        held.delete(expected);
        emit(expected, next.data, held.size === 0 ? message.seq + 1 : lowestHeld());
        expected++;
      }
    };

    const lowestHeld = () => {
      let lowest = Infinity;
      for (const { streamSequence } of held.values()) lowest = Math.min(lowest, streamSequence);
      return lowest;
    };

    const finished = (record: FinishedRecord) => {
      // A run that failed while storing its events says how many were stored; later ones may be held.
      if (expected - 1 < record.events || (held.size > 0 && record.outcome === 'completed')) {
        return end(
          new BrokerError(
            `run ${runId} attempt ${record.attempt}: events ${expected} to ${record.events} are missing from stream ${layout.eventsStream} (removed by its limits?)`,
          ),
        );
      }
      if (record.outcome === 'completed') return end();
      end(
        record.error
          ? deserializeError(record.error, runId)
          : new BrokerError(`run ${runId} failed without an error in its record`),
      );
    };

    const onStatus = (message: JsMsg) => {
      const record = decodeRecord(message.data);
      if (!record) {
        const issue = new DecodeIssue(
          0,
          text.decode(message.data),
          `message ${message.seq} of stream ${layout.eventsStream} is not a status record; dropped`,
        );
        return options.onDiagnostic?.(issue);
      }
      if (record.record === 'dead-letter') return end(new DeadLetterError(runId, record.reason, record.attempts));
      if (record.record === 'started') {
        if (attempt === undefined) attempt = record.attempt;
        else if (record.attempt > attempt) end(new AttemptSupersededError(runId, attempt, record.attempt));
        return;
      }
      if (record.attempt === attempt) finished(record);
    };

    const onMessage = (message: JsMsg) => {
      if (done) return;
      // An app callback (onDiagnostic) or a downstream operator that throws ends this subscription, not the app.
      try {
        const token = message.subject.slice(runPrefix.length);
        if (token === 'status') onStatus(message);
        else onEvent(message, Number(token));
      } catch (err) {
        end(err);
      }
    };

    (async () => {
      const jsm = await clientsOf(nc).manager();
      let last: StatusRecord | undefined;
      let lastSequence = 0;
      try {
        const stored = await jsm.streams.getMessage(layout.eventsStream, { last_by_subj: layout.statusSubject(runId) });
        if (stored) {
          last = decodeRecord(stored.data);
          lastSequence = stored.seq;
        }
      } catch (err) {
        throw brokerError(
          nc,
          `could not read the status of run ${runId} from stream ${layout.eventsStream} (has ensureStreams run?)`,
          err,
        );
      }
      if (last?.record === 'dead-letter') throw new DeadLetterError(runId, last.reason, last.attempts);
      let start: FollowStart = { from: 'start' };
      if (after) {
        if (last && last.attempt > after.attempt) throw new AttemptSupersededError(runId, after.attempt, last.attempt);
        start = { from: 'sequence', sequence: after.resumeFrom };
      } else if (last?.record === 'started') {
        attempt = last.attempt;
        start = { from: 'sequence', sequence: lastSequence };
      } else if (last?.record === 'finished') {
        attempt = last.attempt;
        start = { from: 'sequence', sequence: last.startSequence };
      }
      if (done) return;
      following = await follow(nc, layout.eventsStream, layout.runSubjects(runId), start, onMessage, (error) =>
        end(error),
      );
      if (done) following.stop();
    })().catch((err: unknown) =>
      end(err instanceof BrokerError || isEvoSciError(err) ? err : brokerError(nc, `could not read run ${runId}`, err)),
    );

    return () => {
      done = true;
      following?.stop();
    };
  });
}

function isEvoSciError(err: unknown): err is EvoSciError {
  return err instanceof Error && 'stderrTail' in err;
}
