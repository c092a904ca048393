// A broker restart in the middle of a run, on a nats-server of this test's own
// with file storage: publishing resumes, and a consumer following the run
// live loses nothing and repeats nothing.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import { ensureStreams, fromJetStream, publishTo } from '../../src/jetstream/index.js';
import { run } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/index.js';
import { ownBroker, type OwnBroker } from './support.js';

const COUNT = 400;
const lines = Array.from({ length: COUNT }, (_, i) => JSON.stringify({ type: 'text', content: `delta ${i} ` }));
const done = '{"type": "done", "content": "", "response": ""}';
const expected = [...lines, done].map((l) => JSON.parse(l) as EvoEvent);
const reconnecting = (url: string) =>
  connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100, timeout: 2000 });

describe('a broker restart mid-run', () => {
  let broker: OwnBroker;
  const connections: NatsConnection[] = [];

  beforeAll(async () => {
    broker = await ownBroker();
    await broker.start();
  });
  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    await broker?.dispose();
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'after %s: publishing resumes and the consumer loses and repeats nothing',
    async (signal) => {
      const publisher = await reconnecting(broker.url);
      const reader = await reconnecting(broker.url);
      connections.push(publisher, reader);
      const prefix = `restart-${signal.toLowerCase()}`;
      await ensureStreams(publisher, { prefix, storage: 'file' });
      const runId = 'r1';

      const remote = lastValueFrom(fromJetStream(reader, runId, { prefix }).pipe(toArray()));
      let stored = 0;
      const local = lastValueFrom(
        run({ prompt: 'restart', ...fakeEvoSci([{ lines, delayMs: 8 }, { lines: [done] }]) }).pipe(
          publishTo(publisher, runId, { prefix, ackTimeoutMs: 1000 }),
          toArray(),
        ),
      );
      const count = (events: readonly unknown[]) => events.length;
      // Part of the run is stored, then the broker goes away for a while and comes back.
      const sub = fromJetStream(reader, runId, { prefix }).subscribe(() => stored++);
      while (stored < COUNT / 4) await new Promise((r) => setTimeout(r, 20));
      sub.unsubscribe();
      // The broker comes back once the publisher has seen it go.
      const disconnected = (async () => {
        for await (const status of publisher.status()) if (status.type === 'disconnect') return;
      })();
      await broker.stop(signal);
      await disconnected;
      await broker.start();

      expect(count(await local)).toBe(expected.length);
      expect(await local).toEqual(expected);
      expect(await remote).toEqual(expected);
      // And a replay after the restart reads the same.
      expect(await lastValueFrom(fromJetStream(reader, runId, { prefix }).pipe(toArray()))).toEqual(expected);
    },
    60_000,
  );
});
