// What the JetStream tests share: a connection to the suite's broker (natsUrl()
// of test/support/natsServer.ts), a prefix of their own so that files never
// collide, and clean-up of what they created.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { encodeRecord } from '../../src/jetstream/wire/records.js';
import type { EvoEvent } from '../../src/events/codecs.js';
import { beforeAll, afterAll } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, ReplaySubject, takeWhile, toArray } from 'rxjs';
import {
  ensureStreams,
  layoutOf,
  serveRuns,
  watchRuns,
  type JetStreamLayout,
  type ServeRunsOptions,
  type StatusRecord,
  type WorkerActivity,
} from '../../src/jetstream/index.js';
import { fixturePath } from '../support/collect.js';
import { natsUrl } from '../support/natsServer.js';

export const BROKER = natsUrl();
// Brokers of a test's own (to restart, or with users) are started where the suite's is.
export { freePort, ownBroker, type OwnBroker } from '../support/natsServer.js';

/** The events of a JSONL fixture, as a run of it emits them. */
export function fixtureEvents(name: string): EvoEvent[] {
  return readFileSync(fixturePath(name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as EvoEvent);
}

/** The status records of one run, from the stream's start up to its first `finished` record. */
export function recordsUntilFinished(nc: NatsConnection, prefix: string, runId: string): Promise<StatusRecord[]> {
  return lastValueFrom(
    watchRuns(nc, { prefix, from: 'start' }).pipe(
      filter((r) => r.runId === runId),
      takeWhile((r) => r.record !== 'finished', true),
      toArray(),
    ),
  );
}

/** A fresh prefix: `t<uuid>` cut to a subject token. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${randomUUID().slice(0, 8)}`;
}

/** Connects, with a clear failure if the broker is not there. */
export async function connectBroker(servers = BROKER): Promise<NatsConnection> {
  try {
    return await connect({ servers, timeout: 3000 });
  } catch (err) {
    throw new Error(`the JetStream tests need nats-server -js at ${servers}: ${(err as Error).message}`);
  }
}

/**
 * For one describe block: a fresh prefix and its layout, and (from its
 * `beforeAll` on) a connection and the prefix's streams, removed after it.
 */
export function suiteStreams(name: string): {
  readonly prefix: string;
  readonly layout: JetStreamLayout;
  connection(): NatsConnection;
} {
  const prefix = uniquePrefix(name);
  let nc: NatsConnection | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    nc = await connectBroker();
    cleanup = await streamsFor(nc, prefix);
  });
  afterAll(async () => {
    await cleanup?.();
    await nc?.close();
  });
  return { prefix, layout: layoutOf({ prefix }), connection: () => nc! };
}

/** A `serveRuns` worker in this process; `when` finds the first activity that matches, however early it came. */
export function servedWorker(
  nc: NatsConnection,
  options: ServeRunsOptions,
): { when(match: (a: WorkerActivity) => boolean): Promise<WorkerActivity>; stop(): void } {
  const activity$ = new ReplaySubject<WorkerActivity>();
  const subscription = serveRuns(nc, options).subscribe(activity$);
  return {
    when: (match) => firstValueFrom(activity$.pipe(filter(match))),
    stop: () => subscription.unsubscribe(),
  };
}

/** Creates the streams of `prefix`; the returned function deletes them. */
export async function streamsFor(
  nc: NatsConnection,
  prefix: string,
  options: { storage?: 'file' | 'memory' } = {},
): Promise<() => Promise<void>> {
  await ensureStreams(nc, { prefix, storage: options.storage ?? 'memory', eventsMaxAgeMs: 10 * 60 * 1000 });
  return () => deleteStreams(nc, prefix);
}

export async function deleteStreams(nc: NatsConnection, prefix: string): Promise<void> {
  if (nc.isClosed()) return;
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const layout = layoutOf({ prefix });
  for (const name of [layout.eventsStream, layout.requestsStream, layout.hubStream])
    await jsm.streams.delete(name).catch(() => undefined);
}

/** One message of an attempt written by hand: its `EvoSci-Seq` (none if absent), its `EvoSci-Part`, its payload, more headers. */
export interface HandWritten {
  readonly seq?: number;
  readonly part?: string;
  readonly payload: string | Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Writes attempt 1 of `runId` by hand, as a faulty or foreign producer (or a
 * retry across a broker restart) could leave it: its `started` record, an
 * optional status message after it, the messages as given, and a `finished`
 * record saying `events`.
 */
export async function writeByHand(
  nc: NatsConnection,
  layout: JetStreamLayout,
  runId: string,
  messages: readonly HandWritten[],
  events: number,
  { afterStart }: { afterStart?: string } = {},
): Promise<void> {
  const js = jetstream(nc);
  const started = await js.publish(
    layout.statusSubject(runId),
    encodeRecord({ record: 'started', runId, attempt: 1, at: new Date().toISOString() }),
  );
  if (afterStart !== undefined) await js.publish(layout.statusSubject(runId), afterStart);
  for (const { seq, part, payload, headers: more = {} } of messages) {
    const h = headers();
    for (const [name, value] of Object.entries(more)) h.set(name, value);
    h.set('EvoSci-Attempt', '1');
    if (seq !== undefined) h.set('EvoSci-Seq', String(seq));
    if (part !== undefined) h.set('EvoSci-Part', part);
    await js.publish(layout.attemptSubject(runId, 1), payload, { headers: h });
  }
  const at = new Date().toISOString();
  const finished = { record: 'finished', runId, attempt: 1, at, events, startSequence: started.seq } as const;
  await js.publish(layout.statusSubject(runId), encodeRecord({ ...finished, outcome: 'completed' }));
}
