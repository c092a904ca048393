// A run's records in the events stream as the `RunStatus` a run hub reports.
import type { NatsConnection } from '@nats-io/transport-node';
import type { RunErrorInfo, RunStatus } from '../runs/wire.js';
import { clientsOf } from './wire/clients.js';
import type { JetStreamLayout } from './wire/layout.js';
import { decodeRecord, RunHeaders, type SerializedError, type StatusRecord } from './wire/records.js';
import { cancelStoredAt, readStatus, type StoredStatus } from './read/status.js';
import { readSubmitted, type SubmittedRecord } from './write/submitted.js';

/** What the events stream holds of a run, for its status. */
export interface RunRecords {
  readonly submitted: SubmittedRecord | undefined;
  /** Its last status record, and where it is stored. */
  readonly stored: StoredStatus | undefined;
  /** Events stored so far by the attempt in progress. */
  readonly events: number;
  /** When a cancel of it was stored, while it has not ended. */
  readonly cancelRequestedAt: string | undefined;
  /** Whether the stream holds anything of it at all: read only when it has neither record. */
  readonly anything: boolean;
  /** When the attempt that ended began: the `at` of its `started` record, read only for a run that ended. */
  readonly startedAt?: string | undefined;
}

/** Reads a run's records: every call is the broker's, none is tried again. */
export async function readRunRecords(nc: NatsConnection, layout: JetStreamLayout, id: string): Promise<RunRecords> {
  const [submitted, stored] = await Promise.all([readSubmitted(nc, layout, id), readStatus(nc, layout, id)]);
  const last = stored?.record;
  if (!submitted && !last)
    return { submitted, stored, events: 0, cancelRequestedAt: undefined, anything: await anyRecord(nc, layout, id) };
  const live = last === undefined || last.record === 'started';
  const [events, cancelRequestedAt, startedAt] = await Promise.all([
    last?.record === 'started' ? eventsSoFar(nc, layout, id, last.attempt) : 0,
    live ? cancelStoredAt(nc, layout, id) : undefined,
    last?.record === 'finished' ? startedAtOf(nc, layout, last.startSequence) : undefined,
  ]);
  return { submitted, stored, events, cancelRequestedAt, anything: true, startedAt };
}

/**
 * The `at` of the `started` record an ended attempt's `finished` record
 * names (none for a run that never started, or whose record the stream's
 * limits removed): the finished record does not repeat it.
 */
async function startedAtOf(nc: NatsConnection, layout: JetStreamLayout, sequence: number): Promise<string | undefined> {
  if (sequence <= 0) return undefined;
  const jsm = await clientsOf(nc).manager();
  const stored = await jsm.streams.getMessage(layout.eventsStream, { seq: sequence }).catch(() => null);
  const record = stored ? decodeRecord(stored.data) : undefined;
  return record?.record === 'started' ? record.at : undefined;
}

/**
 * Events stored so far by the attempt in progress: the `EvoSci-Seq` of its
 * last message (counting messages would count each part of a large event).
 */
async function eventsSoFar(nc: NatsConnection, layout: JetStreamLayout, id: string, attempt: number): Promise<number> {
  const jsm = await clientsOf(nc).manager();
  const subject = layout.attemptSubject(id, attempt);
  const last = await jsm.streams.getMessage(layout.eventsStream, { last_by_subj: subject }).catch(() => null);
  const sequence = Number(last?.header?.get(RunHeaders.sequence));
  return Number.isSafeInteger(sequence) && sequence > 0 ? sequence : 0;
}

/** Whether the stream still holds anything of the run (its records aged out, or were removed by its limits). */
async function anyRecord(nc: NatsConnection, layout: JetStreamLayout, id: string): Promise<boolean> {
  const jsm = await clientsOf(nc).manager();
  const filter = layout.runSubjects(id);
  const info = await jsm.streams.info(layout.eventsStream, { subjects_filter: filter }).catch(() => undefined);
  return Object.keys(info?.state.subjects ?? {}).length > 0;
}

/** An error as a status carries it: class, one-line message, details; never stderr. */
function errorInfo(error: SerializedError): RunErrorInfo {
  return {
    name: error.class,
    message: error.message.split('\n')[0]!,
    ...(error.exitCode !== undefined && { exitCode: error.exitCode }),
    ...(error.signal !== undefined && { signal: error.signal }),
    ...(error.threadId !== undefined && { threadId: error.threadId }),
  };
}

/**
 * The thread a run is in: the one its CLI reported at its exit, else the one
 * it resumed, which it goes on in and which is known from its start.
 */
function threadIdOf(last: StatusRecord | undefined, submitted: SubmittedRecord | undefined): string | undefined {
  const reported = last?.record === 'finished' ? (last.threadId ?? last.error?.threadId) : undefined;
  return reported ?? submitted?.resume;
}

/** What a run's last status record (or, before any, its submitted record) says of it. */
export function runStatusOf(runId: string, records: RunRecords): RunStatus {
  const { submitted, events, cancelRequestedAt, startedAt } = records;
  const last: StatusRecord | undefined = records.stored?.record;
  const threadId = threadIdOf(last, submitted);
  const base: RunStatus = {
    id: runId,
    state: 'queued',
    prompt: submitted?.prompt ?? (last?.record === 'started' ? (last.prompt ?? '') : ''),
    createdAt: submitted?.at ?? last?.at ?? new Date(0).toISOString(),
    events,
    ...(threadId !== undefined && { threadId }),
    ...(submitted?.resume !== undefined && { resumed: submitted.resume }),
    ...(submitted?.metadata !== undefined && { metadata: submitted.metadata }),
    ...(cancelRequestedAt !== undefined && { cancelRequestedAt }),
  };
  if (last === undefined) return base;
  if (last.record === 'started') return { ...base, state: 'running', startedAt: last.at };
  if (last.record === 'dead-letter')
    return { ...base, state: 'failed', endedAt: last.at, error: { name: 'DeadLetterError', message: last.reason } };
  const ended = { ...base, ...(startedAt !== undefined && { startedAt }), endedAt: last.at, events: last.events };
  if (last.outcome === 'completed') return { ...ended, state: 'completed' };
  const error = last.error === undefined ? { name: 'EvoSciError', message: 'the run failed' } : errorInfo(last.error);
  return { ...ended, state: error.name === 'CancelledError' ? 'cancelled' : 'failed', error };
}
