// A run's records in the events stream as the `RunStatus` a run hub reports.
import type { RunErrorInfo, RunStatus } from '../runs/wire.js';
import type { SerializedError, StatusRecord } from './wire/records.js';
import type { SubmittedRecord } from './write/submitted.js';

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
export function runStatusOf(
  runId: string,
  submitted: SubmittedRecord | undefined,
  last: StatusRecord | undefined,
  events: number,
): RunStatus {
  const base: RunStatus = {
    id: runId,
    state: 'queued',
    prompt: submitted?.prompt ?? (last?.record === 'started' ? (last.prompt ?? '') : ''),
    createdAt: submitted?.at ?? last?.at ?? new Date(0).toISOString(),
    events,
    ...(submitted?.resume !== undefined && { resumed: submitted.resume }),
    ...(submitted?.metadata !== undefined && { metadata: submitted.metadata }),
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
