// What a worker writes for a run that `cancelRun` ended: why its CLI was
// stopped, and the end of a run that no attempt was running.
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { cancelledError } from '../../runs/runEnd.js';
import { StatusMovedError } from '../wire/errors.js';
import { publishStored } from '../write/publishStored.js';
import { encodeRecord, RunHeaders, serializeError, type FinishedRecord } from '../wire/records.js';
import type { StoredStatus } from '../read/status.js';
import type { WorkerSettings } from './workerTypes.js';

/**
 * Records the end of a cancelled run that no attempt is running: one never
 * started (attempt 0), or one whose last attempt's worker died (that attempt).
 * Conditional on `status`, the run's status as read, so it never lands on an
 * attempt started since; resolves to the record, or `undefined` if the status
 * moved on (another worker recorded the cancel, or holds the run and will).
 */
export async function recordQueuedCancel(
  nc: NatsConnection,
  settings: Pick<WorkerSettings, 'layout' | 'timing' | 'worker'>,
  runId: string,
  status: StoredStatus | undefined,
): Promise<FinishedRecord | undefined> {
  const last = status?.record?.record === 'started' ? status.record : undefined;
  const record: FinishedRecord = {
    record: 'finished',
    runId,
    attempt: last?.attempt ?? 0,
    at: new Date().toISOString(),
    events: 0,
    startSequence: last ? status!.sequence : 0,
    outcome: 'failed',
    error: serializeError(cancelledError(runId, last ? 'requeued' : 'queued')),
    cancelled: 'queued',
    worker: settings.worker,
  };
  try {
    await publishStored(
      nc,
      {
        subject: settings.layout.statusSubject(runId),
        // Every writer an id of its own: two workers recording one cancel must not both read as stored.
        msgID: `${runId}.${record.attempt}.cancelled.${randomUUID()}`,
        headers: {
          [RunHeaders.runId]: runId,
          [RunHeaders.attempt]: String(record.attempt),
          [RunHeaders.record]: 'finished',
        },
        expectLastSequence: status?.sequence ?? 0,
      },
      encodeRecord(record),
      settings.timing,
    );
    return record;
  } catch (err) {
    if (err instanceof StatusMovedError) return undefined;
    throw err;
  }
}
