// NATS's own permissions separate submitters from workers: on a nats-server
// of this test's own, a submitter can queue runs and read their status and
// events, and cannot write either, nor take requests.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureStreams, fromJetStream, layoutOf, serveRuns, submitRun } from '../../src/jetstream/index.js';
import { encodeRecord } from '../../src/jetstream/wire/records.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { fixtureEvents, ownBroker, type OwnBroker, recordsUntilFinished } from './support.js';
import { brokerUsers } from './users.js';

const prefix = 'evosci';
const layout = layoutOf({ prefix });

/** The users of docs/security.md, for the default prefix. */
const users = brokerUsers(prefix);

describe('a broker with submitter and worker users', () => {
  let broker: OwnBroker;
  let worker: NatsConnection;
  let submitter: NatsConnection;
  const contract = fixtureEvents('contract-example.jsonl');

  beforeAll(async () => {
    broker = await ownBroker({ config: users, credentials: { user: 'worker', pass: 'worker-secret' } });
    await broker.start();
    worker = await connect({ servers: broker.url, user: 'worker', pass: 'worker-secret' });
    submitter = await connect({ servers: broker.url, user: 'submitter', pass: 'submitter-secret' });
    await ensureStreams(worker, { prefix, storage: 'memory' });
  });
  afterAll(async () => {
    await submitter?.close();
    await worker?.close();
    await broker?.dispose();
  });

  it('lets a submitter queue a run and read it, and not forge its events or status', async () => {
    const serving = serveRuns(worker, {
      prefix,
      worker: 'the-worker',
      runOptions: fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]),
    }).subscribe();
    try {
      const runId = await submitRun(submitter, { prompt: 'allowed' }, { prefix });
      expect(await lastValueFrom(fromJetStream(submitter, runId, { prefix }).pipe(toArray()))).toEqual(contract);

      // A forged failure of the run, and a forged event: the server refuses both publishes.
      const forged = encodeRecord({
        record: 'finished',
        runId,
        attempt: 1,
        at: new Date().toISOString(),
        events: 0,
        startSequence: 1,
        outcome: 'failed',
      });
      const js = jetstream(submitter, { timeout: 2000 });
      await expect(js.publish(layout.statusSubject(runId), forged)).rejects.toThrow(/Permissions Violation/);
      await expect(js.publish(layout.attemptSubject(runId, 2), '{"type": "text", "content": "x"}')).rejects.toThrow(
        /Permissions Violation/,
      );
      // Nor can it take requests meant for workers: it may read the workers' consumer's counts, not pull from it.
      const pull = `$JS.API.CONSUMER.MSG.NEXT.${layout.requestsStream}.${layout.workersConsumer}`;
      await expect(
        submitter.request(pull, JSON.stringify({ batch: 1, expires: 1e9 }), { timeout: 2000 }),
      ).rejects.toThrow(/Permissions Violation/);

      // The run reads as the worker wrote it.
      expect(await lastValueFrom(fromJetStream(submitter, runId, { prefix }).pipe(toArray()))).toEqual(contract);
      const written = await recordsUntilFinished(submitter, prefix, runId);
      expect(written.map((r) => [r.record, r.record === 'dead-letter' ? undefined : r.worker])).toEqual([
        ['started', 'the-worker'],
        ['finished', 'the-worker'],
      ]);
      expect(written.at(-1)).toMatchObject({ outcome: 'completed' });
    } finally {
      serving.unsubscribe();
    }
  }, 30_000);
});
