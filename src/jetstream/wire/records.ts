// The status records of a run and the error they carry, as JSON: what a
// remote consumer needs to end exactly as a local subscriber of run() does.
import * as t from 'io-ts';
import { DecodeIssue } from '../../events/decode/decodeLine.js';
import { DecodeError, EvoSciError, runErrorOf, type EvoSciErrorDetails } from '../../events/errors.js';
import { BrokerError, DeadLetterError, StorageLimitError } from './errors.js';

/** Message headers written on every event and record. */
export const RunHeaders = {
  /** The run's id. */
  runId: 'EvoSci-Run-Id',
  /** The attempt's number, from 1. */
  attempt: 'EvoSci-Attempt',
  /** 1-based position of an event in its attempt. */
  sequence: 'EvoSci-Seq',
  /** On status records: `started`, `finished` or `dead-letter`. */
  record: 'EvoSci-Record',
  /**
   * On an event too large for one message, which goes as several with the
   * same `EvoSci-Seq`: the 1-based place of this one, `<part>/<parts>`.
   */
  part: 'EvoSci-Part',
} as const;

/** An error as JSON: its class name, its own message (without the stderr lines the class appends) and its details. */
export const SerializedError = t.intersection([
  t.type({
    /** The error's class name, such as `ExitError`; `deserializeError` makes that class again. */
    class: t.string,
    /** Its own message, without the stderr lines the class appends. */
    message: t.string,
  }),
  t.partial({
    /** The CLI's exit code, when it exited. */
    exitCode: t.number,
    /** The signal that ended the CLI, such as `SIGKILL`. */
    signal: t.string,
    /** The last lines the CLI wrote to stderr. */
    stderrTail: t.string,
    /** The thread the CLI reported, to resume it. */
    threadId: t.string,
    /** For a `DecodeError`: the issue. */
    issue: t.type({
      /** 1-based line number in the stream. */
      line: t.number,
      /** The line as read. */
      raw: t.string,
      /** What was wrong with it. */
      message: t.string,
    }),
  }),
]);
export type SerializedError = t.TypeOf<typeof SerializedError>;

/** An attempt began: written before its first event. */
export const StartedRecord = t.intersection([
  t.type({
    /** Discriminant of this record. */
    record: t.literal('started'),
    /** The run it belongs to. */
    runId: t.string,
    /** 1-based number of this attempt of the run. */
    attempt: t.number,
    /** When it was written, as an ISO 8601 timestamp. */
    at: t.string,
  }),
  t.partial({
    /** The name of the worker running the attempt. */
    worker: t.string,
    /** The prompt of the run. */
    prompt: t.string,
    /** The stream sequence of the run request the attempt runs. */
    request: t.number,
  }),
]);
export type StartedRecord = t.TypeOf<typeof StartedRecord>;

/**
 * An attempt ended, after all its events were stored: the run completed, or
 * failed with `error`. A run that `cancelRun` ended fails with a
 * `CancelledError` and says in `cancelled` what the cancel stopped: `running`,
 * the attempt in progress (its CLI stopped); `queued`, a run no attempt was
 * running (never started: then `attempt` and `startSequence` are 0; or
 * waiting to run again after its worker died: then they are that attempt's).
 * `threadId` is the thread the CLI reported as it exited, which EvoSci does
 * after `done`: the worker then stores the record again, the same with
 * `threadId` (records written before it was added have none).
 */
export const FinishedRecord = t.intersection([
  t.type({
    /** Discriminant of this record. */
    record: t.literal('finished'),
    /** The run it belongs to. */
    runId: t.string,
    /** The attempt that ended, as its `started` record numbered it; 0 for a run cancelled before it ever started. */
    attempt: t.number,
    /** When it was written, as an ISO 8601 timestamp. */
    at: t.string,
    /** How many events the attempt stored (at least: 0 for a run cancelled while queued). */
    events: t.number,
    /** The stream sequence of the attempt's `started` record. */
    startSequence: t.number,
    /** `failed` comes with `error`. */
    outcome: t.union([t.literal('completed'), t.literal('failed')]),
  }),
  t.partial({
    /** Why a `failed` run failed. */
    error: SerializedError,
    /** The name of the worker that ran the attempt. */
    worker: t.string,
    /** For a run `cancelRun` ended: whether it stopped an attempt in progress or a queued run. */
    cancelled: t.union([t.literal('queued'), t.literal('running')]),
    /** The thread the CLI reported as it exited, to resume it. */
    threadId: t.string,
  }),
]);
export type FinishedRecord = t.TypeOf<typeof FinishedRecord>;

/** The run will not be run (again): a bad request, or every attempt's worker died. */
export const DeadLetterRecord = t.type({
  /** Discriminant of this record. */
  record: t.literal('dead-letter'),
  /** The run it belongs to. */
  runId: t.string,
  /** When it was written, as an ISO 8601 timestamp. */
  at: t.string,
  /** How many times it was started. */
  attempts: t.number,
  /** Why it will not be run. */
  reason: t.string,
});
export type DeadLetterRecord = t.TypeOf<typeof DeadLetterRecord>;

/** Any record of a run's status subject: `started`, `finished` or `dead-letter`. */
export const StatusRecord = t.union([StartedRecord, FinishedRecord, DeadLetterRecord]);
export type StatusRecord = t.TypeOf<typeof StatusRecord>;

/** The errors of this layer that a run can end with, besides those of `run()`. */
const BROKER_ERRORS = { BrokerError, StorageLimitError };

/** An error of a run as JSON. Errors that are not an `EvoSciError` keep their name and message. */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { class: 'Error', message: String(error) };
  const message = error instanceof EvoSciError ? error.shortMessage : error.message;
  const out: { -readonly [K in keyof SerializedError]: SerializedError[K] } = { class: error.name, message };
  if (error instanceof EvoSciError) {
    if (error.exitCode !== undefined) out.exitCode = error.exitCode;
    if (error.signal !== undefined) out.signal = error.signal;
    if (error.stderrTail !== '') out.stderrTail = error.stderrTail;
    if (error.threadId !== undefined) out.threadId = error.threadId;
  }
  if (error instanceof DecodeError)
    out.issue = { line: error.issue.line, raw: error.issue.raw, message: error.issue.message };
  return out;
}

/**
 * The error back, as the same `EvoSciError` subclass with the same message and
 * details. Any other error (an app callback's `TypeError`, say) becomes an
 * `EvoSciError` whose message starts with the original class name.
 */
export function deserializeError(serialized: SerializedError, runId: string): EvoSciError {
  const details: EvoSciErrorDetails = {
    exitCode: serialized.exitCode,
    signal: serialized.signal,
    threadId: serialized.threadId,
    ...(serialized.stderrTail === undefined ? {} : { stderrTail: serialized.stderrTail }),
  };
  if (serialized.class === 'DecodeError' && serialized.issue) {
    const { line, raw, message } = serialized.issue;
    return new DecodeError(new DecodeIssue(line, raw, message), details);
  }
  if (serialized.class === 'DeadLetterError') return new DeadLetterError(runId, serialized.message, 0);
  return runErrorOf(serialized.class, serialized.message, details, BROKER_ERRORS);
}

export const utf8 = new TextEncoder();
const decoder = new TextDecoder();

/** A status record as a message payload. */
export function encodeRecord(record: StatusRecord): Uint8Array {
  return utf8.encode(JSON.stringify(record));
}

/** A status record from a payload, or `undefined` if it is not one. */
export function decodeRecord(data: Uint8Array): StatusRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
  return StatusRecord.is(value) ? value : undefined;
}
