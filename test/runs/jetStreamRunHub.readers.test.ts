import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { firstValueFrom, filter, lastValueFrom, ReplaySubject, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetStreamRunHub, layoutOf } from '../../src/jetstream/index.js';
import type { IndexedEvent, RunHub } from '../../src/runs/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { connectBroker, servedWorker, streamsFor, uniquePrefix } from '../jetstream/support.js';

const text = (i: number) => JSON.stringify({ type: 'text', content: `e${i} ` });
const DONE = '{"type": "done", "content": "", "response": "r"}';

describe('jetStreamRunHub readers in one hub process', () => {
  let nc: NatsConnection;
  let hub: RunHub;
  let worker: ReturnType<typeof servedWorker>;
  let removeStreams: () => Promise<void>;
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-hubreaders-'));
  const prefix = uniquePrefix('readers');
  const go = join(dir, 'go');

  beforeAll(async () => {
    nc = await connectBroker();
    removeStreams = await streamsFor(nc, prefix);
    // 20 events, then the run waits for the test's sign, then 20 more and its end.
    const steps = [
      { lines: Array.from({ length: 20 }, (_, i) => text(i)) },
      { waitForFile: go },
      { lines: [...Array.from({ length: 19 }, (_, i) => text(20 + i)), DONE] },
    ];
    worker = servedWorker(nc, { prefix, runOptions: (request) => ({ prompt: request.prompt, ...fakeEvoSci(steps) }) });
    hub = jetStreamRunHub(nc, { prefix });
  });

  afterAll(async () => {
    worker.stop();
    await hub.close();
    await removeStreams();
    await nc.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const consumers = async () => {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(layoutOf({ prefix }).eventsStream)).state.consumer_count;
  };

  it('share one consumer, each reader getting every event after its place once, in order', async () => {
    const { id } = await hub.start({ prompt: 'shared' });
    const first = new ReplaySubject<IndexedEvent>();
    const firstAll = lastValueFrom(hub.follow(id).pipe(toArray()));
    hub.follow(id).subscribe(first);
    await firstValueFrom(first.pipe(filter(({ index }) => index === 19)));
    // Two more readers come while the run waits: one from the start, one after event 9.
    const fromStart = lastValueFrom(hub.follow(id).pipe(toArray()));
    const fromTen = lastValueFrom(hub.follow(id, { after: 9 }).pipe(toArray()));
    const seen = new ReplaySubject<IndexedEvent>();
    hub.follow(id, { after: 14 }).subscribe(seen);
    await firstValueFrom(seen.pipe(filter(({ index }) => index === 19)));
    expect(await consumers()).toBe(1);
    expect(existsSync(go)).toBe(false);
    writeFileSync(go, '');
    const indexes = (events: IndexedEvent[]) => events.map(({ index }) => index);
    const all = Array.from({ length: 40 }, (_, i) => i);
    expect(indexes(await firstAll)).toEqual(all);
    expect(indexes(await fromStart)).toEqual(all);
    expect(indexes(await fromTen)).toEqual(all.slice(10));
    const events = await fromStart;
    expect(events.slice(0, 3).map(({ event }) => event)).toEqual([0, 1, 2].map((i) => JSON.parse(text(i))));
    // The last reader gone, the consumer is deleted: the next reader of the run reads it again, alone.
    await firstValueFrom(seen.pipe(toArray()));
    await expect.poll(consumers, { timeout: 10_000 }).toBe(0);
    expect(indexes(await lastValueFrom(hub.follow(id, { after: 37 }).pipe(toArray())))).toEqual([38, 39]);
  });
});
