// The record a run hub stores when it takes a run: what names the run
// before any worker has taken it, so that a hub on any host finds it, and
// what makes one start of an id the only one.
import type { NatsConnection } from '@nats-io/transport-node';
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { StatusMovedError } from '../wire/errors.js';
import { type JetStreamLayout } from '../wire/layout.js';
import { firstOn } from '../read/status.js';
import { publishStored, type PublishTiming } from './publishStored.js';
import { RunHeaders, utf8 } from '../wire/records.js';

/** A run a hub took: written once, before its request is queued. */
export const SubmittedRecord = t.intersection([
  t.type({ record: t.literal('submitted'), runId: t.string, at: t.string, prompt: t.string }),
  t.partial({
    /** What the request was, for a repeated idempotency key: the same request, or another (refused). */
    fingerprint: t.string,
    resume: t.string,
    metadata: t.record(t.string, t.string),
  }),
]);
export type SubmittedRecord = t.TypeOf<typeof SubmittedRecord>;

/**
 * Stores the record, only if the run has none: resolves `true` when this
 * call stored it, `false` when the run was already taken (by this hub or
 * another, now or earlier).
 */
export async function storeSubmitted(
  nc: NatsConnection,
  layout: JetStreamLayout,
  record: SubmittedRecord,
  timing: PublishTiming,
): Promise<boolean> {
  const target = {
    subject: layout.submittedSubject(record.runId),
    msgID: `${record.runId}.submitted`,
    headers: { [RunHeaders.runId]: record.runId },
    expectLastSequence: 0,
  };
  try {
    const ack = await publishStored(nc, target, utf8.encode(JSON.stringify(record)), timing);
    return !ack.duplicate;
  } catch (err) {
    if (err instanceof StatusMovedError) return false;
    throw err;
  }
}

/**
 * The run's submitted record, if it has one that reads as one: the first on
 * its subject, the one stored on the condition that it was the first. A
 * submitter may append to the subject; what it appends is never read.
 */
export async function readSubmitted(
  nc: NatsConnection,
  layout: JetStreamLayout,
  runId: string,
): Promise<SubmittedRecord | undefined> {
  const stored = await firstOn(nc, layout.eventsStream, layout.submittedSubject(runId));
  if (!stored) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(stored.string());
  } catch {
    return undefined;
  }
  const decoded = SubmittedRecord.decode(value);
  return isLeft(decoded) ? undefined : decoded.right;
}
