// A run's records in the events stream as the `RunStatus` a run hub reports.
import type { NatsConnection } from '@nats-io/transport-node';
import type { RunErrorInfo, RunStatus } from '../runs/wire.js';
import { clientsOf } from './wire/clients.js';
import type { JetStreamLayout } from './wire/layout.js';
import { RunHeaders, type SerializedError, type StatusRecord } from './wire/records.js';
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
}

/** Reads a run's records: every call is the broker's, none is tried again. */
export async function readRunRecords(nc: NatsConnection, layout: JetStreamLayout, id: string): Promise<RunRecords> {
  const [submitted, stored] = await Promise.all([readSubmitted(nc, layout, id), readStatus(nc, layout, id)]);
  const last = stored?.record;
  if (!submitted && !last)
    return { submitted, stored, events: 0, cancelRequestedAt: undefined, anything: await anyRecord(nc, layout, id) };
  const live = last === undefined || last.record === 'started';
  const [events, cancelRequestedAt] = await Promise.all([
    last?.record === 'started' ? eventsSoFar(nc, layout, id, last.attempt) : 0,
    live ? cancelStoredAt(nc, layout, id) : undefined,
  ]);
  return { submitted, stored, events, cancelRequestedAt, anything: true };
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

/** What a run's last status record (or, before any, its submitted record) says of it. */
export function runStatusOf(runId: string, records: RunRecords): RunStatus {
  const { submitted, events, cancelRequestedAt } = records;
  const last: StatusRecord | undefined = records.stored?.record;
  const base: RunStatus = {
    id: runId,
    state: 'queued',
    prompt: submitted?.prompt ?? (last?.record === 'started' ? (last.prompt ?? '') : ''),
    createdAt: submitted?.at ?? last?.at ?? new Date(0).toISOString(),
    events,
    ...(submitted?.resume !== undefined && { resumed: submitted.resume }),
    ...(submitted?.metadata !== undefined && { metadata: submitted.metadata }),
    ...(cancelRequestedAt !== undefined && { cancelRequestedAt }),
  };
  if (last === undefined) return base;
  if (last.record === 'started') return { ...base, state: 'running', startedAt: last.at };
  if (last.record === 'dead-letter')
    return { ...base, state: 'failed', endedAt: last.at, error: { name: 'DeadLetterError', message: last.reason } };
  if (last.outcome === 'completed') return { ...base, state: 'completed', endedAt: last.at, events: last.events };
  const error = last.error === undefined ? { name: 'EvoSciError', message: 'the run failed' } : errorInfo(last.error);
  const state = error.name === 'CancelledError' ? 'cancelled' : 'failed';
  return { ...base, state, endedAt: last.at, events: last.events, error };
}
