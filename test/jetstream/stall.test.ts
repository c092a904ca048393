// A broker that stops answering for 8 s, on a nats-server of this test's own:
// the connection stays open, every call times out, and the worker keeps
// serving: runs submitted during and after the stall finish.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureStreams, fromJetStream, serveRuns, submitRun } from '../../src/jetstream/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { fixtureEvents, ownBroker, type OwnBroker } from './support.js';

const STALL_MS = 8000;
const prefix = 'stall';
const contract = fixtureEvents('contract-example.jsonl');

describe('a broker that stalls', () => {
  let broker: OwnBroker;
  let nc: NatsConnection;

  beforeAll(async () => {
    broker = await ownBroker();
    await broker.start();
    nc = await connect({ servers: broker.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    await ensureStreams(nc, { prefix, storage: 'memory' });
  });
  afterAll(async () => {
    broker?.signal('SIGCONT');
    await nc?.close();
    await broker?.dispose();
  });

  it(`keeps a worker serving through ${STALL_MS / 1000} s without answers`, async () => {
    const errors: unknown[] = [];
    const serving = serveRuns(nc, {
      prefix,
      concurrency: 2,
      runOptions: fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]),
    }).subscribe({ error: (err: unknown) => errors.push(err) });
    const read = (runId: string) => lastValueFrom(fromJetStream(nc, runId, { prefix }).pipe(toArray()));
    try {
      expect(await read(await submitRun(nc, { prompt: 'before' }, { prefix }))).toEqual(contract);

      broker.signal('SIGSTOP');
      // Queued while nothing answers: stored once the broker reads its socket again.
      const during = submitRun(nc, { prompt: 'during' }, { prefix });
      await new Promise((resolve) => setTimeout(resolve, STALL_MS));
      broker.signal('SIGCONT');

      const after = await submitRun(nc, { prompt: 'after' }, { prefix });
      expect(await read(await during)).toEqual(contract);
      expect(await read(after)).toEqual(contract);
      expect(errors).toEqual([]);
    } finally {
      serving.unsubscribe();
    }
  }, 90_000);
});
