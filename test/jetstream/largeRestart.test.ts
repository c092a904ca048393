// Large events on a nats-server of this test's own, with the users of docs/security.md
// and file storage: a submitter reads them with the rights it already has
// (their parts are messages of the run's own subject), and a broker restart
// while an event's parts are being stored stores each part once.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { lastValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import { ensureStreams, fromJetStream, layoutOf, publishTo, submitRun } from '../../src/jetstream/index.js';
import { toJsonl } from '../../src/events/decode/jsonl.js';
import { partBytesOf } from '../../src/jetstream/wire/parts.js';
import { run } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/index.js';
import { ownBroker, servedWorker, type OwnBroker } from './support.js';
import { ThrottledProxy } from './throttledProxy.js';
import { brokerUsers } from './users.js';

const MB = 1_000_000;
const prefix = 'evosci';
const layout = layoutOf({ prefix });
const done = '{"type": "done", "content": "", "response": ""}';
const small = ['{"type": "text", "content": "a"}', '{"type": "text", "content": "b"}'];
const script = (bytes: number) => fakeEvoSci([{ lines: small }, { bigLine: bytes }, { lines: [done] }]);
/** The events of `script(bytes)`, compared without a diff of megabytes when they differ. */
function isScript(events: readonly EvoEvent[], bytes: number): boolean {
  const big = events[2];
  return (
    events.length === 4 &&
    big?.type === 'tool_result' &&
    big.content === 'x'.repeat(bytes) &&
    JSON.stringify([...events.slice(0, 2), events[3]]) === JSON.stringify([...small, done].map((l) => JSON.parse(l)))
  );
}
const as = (user: 'worker' | 'submitter', url: string) =>
  connect({ servers: url, user, pass: `${user}-secret`, maxReconnectAttempts: -1, reconnectTimeWait: 100 });

describe('large events on a broker with users', () => {
  let broker: OwnBroker;
  const connections: NatsConnection[] = [];
  let worker: NatsConnection;
  let submitter: NatsConnection;

  beforeAll(async () => {
    broker = await ownBroker({ config: brokerUsers(prefix), credentials: { user: 'worker', pass: 'worker-secret' } });
    await broker.start();
    connections.push((worker = await as('worker', broker.url)), (submitter = await as('submitter', broker.url)));
    await ensureStreams(worker, { prefix, storage: 'file' });
  });
  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    await broker?.dispose();
  });

  it('are read by a submitter with the rights it has', async () => {
    const serving = servedWorker(worker, { prefix, runOptions: script(8 * MB) });
    try {
      const runId = await submitRun(submitter, { prompt: 'large' }, { prefix });
      const events = await lastValueFrom(fromJetStream(submitter, runId, { prefix }).pipe(toArray()));
      expect(isScript(events, 8 * MB)).toBe(true);
    } finally {
      serving.stop();
    }
  }, 60_000);

  it('are stored once, each part, when the broker restarts while their parts are stored', async () => {
    // A slow link, so that the restart comes while the 16 MB event is half stored.
    const proxy = await ThrottledProxy.start(broker.url, 4 * MB);
    const publisher = await as('worker', proxy.url);
    connections.push(publisher);
    try {
      const remote = lastValueFrom(fromJetStream(submitter, 'r1', { prefix }).pipe(toArray()));
      const local = lastValueFrom(
        run({ prompt: 'restart', ...script(16 * MB) }).pipe(publishTo(publisher, 'r1', { prefix }), toArray()),
      );
      const subject = layout.attemptSubject('r1', 1);
      const stored = async () =>
        (await (await jetstreamManager(worker)).streams.info(layout.eventsStream, { subjects_filter: subject })).state
          .subjects?.[subject] ?? 0;
      // The two small events and the first 200 parts (some 3 MB) of the large one.
      while ((await stored()) < 202) await new Promise((r) => setTimeout(r, 20));
      await broker.stop('SIGKILL');
      await broker.start();

      expect(isScript(await local, 16 * MB)).toBe(true);
      expect(isScript(await remote, 16 * MB)).toBe(true);
      // Each part once: two small events, the large one's parts, done.
      const line = Buffer.byteLength(toJsonl((await local)[2]!));
      expect(await stored()).toBe(2 + Math.ceil(line / partBytesOf(publisher)) + 1);
      expect(isScript(await lastValueFrom(fromJetStream(submitter, 'r1', { prefix }).pipe(toArray())), 16 * MB)).toBe(
        true,
      );
    } finally {
      await proxy.close();
    }
  }, 90_000);
});
