// A broker that stops answering for 8 s, on a nats-server of this test's own:
// the connection stays open, every call times out, and the worker keeps
// serving: runs submitted during and after the stall finish. Then a one-way
// stall, as real partitions often are: what the worker sends is held while it
// still receives, and a request submitted meanwhile starts once the link
// heals, not an ack wait later.
import { performance } from 'node:perf_hooks';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureStreams, fromJetStream, serveRuns, submitRun, type WorkerActivity } from '../../src/jetstream/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { fixtureEvents, ownBroker, uniquePrefix, type OwnBroker } from './support.js';

const STALL_MS = 8000;
/** Long enough to tell a request started as the link heals from one redelivered after its ack wait. */
const ONE_WAY_ACK_WAIT_MS = 60_000;
const ONE_WAY_ROUNDS = 3;
const prefix = 'stall';
const contract = fixtureEvents('contract-example.jsonl');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

  it(
    `starts a request submitted while the worker's writes are held, as soon as the link heals`,
    async () => {
      const oneWay = uniquePrefix('oneway');
      await ensureStreams(nc, { prefix: oneWay, storage: 'memory' });
      const proxy = await TcpProxy.start(broker.url);
      const workerNc = await connect({ servers: proxy.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
      const activity: WorkerActivity[] = [];
      const errors: unknown[] = [];
      const serving = serveRuns(workerNc, {
        prefix: oneWay,
        concurrency: 2,
        ackWaitMs: ONE_WAY_ACK_WAIT_MS,
        runOptions: fakeEvoSci([{ transcript: fixturePath('contract-example.jsonl') }]),
      }).subscribe({ next: (a) => activity.push(a), error: (err: unknown) => errors.push(err) });
      const read = (runId: string) => lastValueFrom(fromJetStream(nc, runId, { prefix: oneWay }).pipe(toArray()));
      try {
        expect(await read(await submitRun(nc, { prompt: 'before' }, { prefix: oneWay }))).toEqual(contract);
        for (let round = 1; round <= ONE_WAY_ROUNDS; round++) {
          proxy.stall('toServer');
          // The worker's pull in hand when the stall began has expired by now, and its next ones are held.
          await sleep(STALL_MS / 2);
          const during = await submitRun(nc, { prompt: `during ${round}` }, { prefix: oneWay });
          await sleep(STALL_MS / 2);
          proxy.resume();
          const healed = performance.now();
          expect(await read(during)).toEqual(contract);
          // Far inside the ack wait: the request was not left stranded until its redelivery.
          expect(performance.now() - healed).toBeLessThan(ONE_WAY_ACK_WAIT_MS / 2);
          expect(activity.filter((a) => a.type === 'started' && a.runId === during)).toHaveLength(1);
        }
        expect(errors).toEqual([]);
      } finally {
        serving.unsubscribe();
        await workerNc.close();
        await proxy.close();
      }
    },
    ONE_WAY_ROUNDS * (STALL_MS + ONE_WAY_ACK_WAIT_MS) + 30_000,
  );
});
