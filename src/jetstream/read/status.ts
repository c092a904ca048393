import type { NatsConnection } from '@nats-io/transport-node';
import type { MsgRequest, StoredMsg } from '@nats-io/jetstream';
import { AttemptSupersededError } from '../wire/errors.js';
import { type JetStreamLayout } from '../wire/layout.js';
import { clientsOf } from '../wire/clients.js';
import { decodeRecord, type StatusRecord } from '../wire/records.js';

/** The last message on a run's status subject: its record (if it is one) and its stream sequence. */
export interface StoredStatus {
  readonly record: StatusRecord | undefined;
  readonly sequence: number;
}

/**
 * The first message stored on `subject`, if any: of a subject written once
 * on condition (`Nats-Expected-Last-Subject-Sequence` 0), the one that met it.
 */
export async function firstOn(nc: NatsConnection, stream: string, subject: string): Promise<StoredMsg | null> {
  const jsm = await clientsOf(nc).manager();
  // The server takes `next_by_subj` (since 2.9); the client's type names only `seq` and `last_by_subj`.
  return jsm.streams.getMessage(stream, { seq: 0, next_by_subj: subject } as unknown as MsgRequest);
}

/** The last status message of a run, if it has any. */
export async function readStatus(
  nc: NatsConnection,
  layout: JetStreamLayout,
  runId: string,
): Promise<StoredStatus | undefined> {
  const jsm = await clientsOf(nc).manager();
  const stored = await jsm.streams.getMessage(layout.eventsStream, { last_by_subj: layout.statusSubject(runId) });
  return stored ? { record: decodeRecord(stored.data), sequence: stored.seq } : undefined;
}

/** Whether the request stored at `sequence` is still in the work queue: taken, or waiting, and not yet acknowledged. */
export async function requestPending(nc: NatsConnection, layout: JetStreamLayout, sequence: number): Promise<boolean> {
  const jsm = await clientsOf(nc).manager();
  return (await jsm.streams.getMessage(layout.requestsStream, { seq: sequence })) !== null;
}

/** Whether a cancel of the run is stored (see `cancelRun`): then no attempt of it may start. */
export async function cancelRequested(nc: NatsConnection, layout: JetStreamLayout, runId: string): Promise<boolean> {
  const jsm = await clientsOf(nc).manager();
  return (await jsm.streams.getMessage(layout.eventsStream, { last_by_subj: layout.cancelSubject(runId) })) !== null;
}

/**
 * When a cancel of the run was stored, as an ISO date: the stream's own time
 * of the message, not the `at` its writer put in it.
 */
export async function cancelStoredAt(
  nc: NatsConnection,
  layout: JetStreamLayout,
  runId: string,
): Promise<string | undefined> {
  const jsm = await clientsOf(nc).manager();
  const stored = await jsm.streams.getMessage(layout.eventsStream, { last_by_subj: layout.cancelSubject(runId) });
  return stored?.time.toISOString();
}

/** The error of an attempt the run's status has moved past, if it has (or if its status cannot be read: none). */
export async function supersedingError(
  nc: NatsConnection,
  layout: JetStreamLayout,
  runId: string,
  attempt: number,
): Promise<AttemptSupersededError | undefined> {
  const record = (await readStatus(nc, layout, runId).catch(() => undefined))?.record;
  if (record === undefined) return undefined;
  const latest = record.record === 'dead-letter' ? record.attempts : record.attempt;
  if (record.record !== 'dead-letter' && latest <= attempt) return undefined;
  return new AttemptSupersededError(runId, attempt, Math.max(latest, attempt + 1));
}
