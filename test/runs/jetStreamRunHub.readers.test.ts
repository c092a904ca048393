import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { firstValueFrom, filter, lastValueFrom, ReplaySubject, toArray, type Observable } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlowControl } from '../../src/common/FlowControl.js';
import { toJsonl } from '../../src/events/decode/jsonl.js';
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
  const texts = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => text(from + i));

  beforeAll(async () => {
    nc = await connectBroker();
    removeStreams = await streamsFor(nc, prefix);
    // 20 events, then the run waits for the test's sign (a file named by its prompt), then 20 more and its end;
    // a run asked for 'long' waits again, and has 10 more.
    const steps = (prompt: string) =>
      prompt === 'long'
        ? [
            { lines: texts(0, 20) },
            { waitForFile: join(dir, 'long-1') },
            { lines: texts(20, 40) },
            { waitForFile: join(dir, 'long-2') },
            { lines: [...texts(40, 49), DONE] },
          ]
        : [{ lines: texts(0, 20) }, { waitForFile: go }, { lines: [...texts(20, 39), DONE] }];
    worker = servedWorker(nc, {
      prefix,
      runOptions: (request) => ({ prompt: request.prompt, ...fakeEvoSci(steps(request.prompt)) }),
    });
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

  /** A reader of `events$`: what it has seen so far, and all it gets once it ends. */
  const reader = (events$: Observable<IndexedEvent>) => {
    const seen = new ReplaySubject<IndexedEvent>();
    const all = lastValueFrom(seen.pipe(toArray()));
    events$.subscribe(seen);
    const reached = (index: number) => firstValueFrom(seen.pipe(filter((event) => event.index === index)));
    return { all, reached };
  };

  it('past sharedReadBytes, send each reader on alone from its place, letting the shared consumer go', async () => {
    // The first 25 events fit in a shared reading; the 26th passes its bound.
    const lines = Array.from({ length: 25 }, (_, i) => Buffer.byteLength(toJsonl(JSON.parse(text(i)))));
    const bounded = jetStreamRunHub(nc, { prefix, sharedReadBytes: lines.reduce((a, b) => a + b) });
    const { id } = await bounded.start({ prompt: 'long' });
    // An idle reader, stopped after five events, and two that keep up.
    const flow = new FlowControl();
    const idle = reader(bounded.follow(id, { flow }));
    await idle.reached(4);
    flow.pause();
    const fromStart = reader(bounded.follow(id));
    const fromFifteen = reader(bounded.follow(id, { after: 14 }));
    await Promise.all([fromStart.reached(19), fromFifteen.reached(19)]);
    expect(await consumers()).toBe(1);
    // The run goes past the bound: each reader reads on alone, a consumer each, and the shared one is deleted.
    writeFileSync(join(dir, 'long-1'), '');
    await Promise.all([fromStart.reached(39), fromFifteen.reached(39)]);
    await expect.poll(consumers, { timeout: 10_000 }).toBe(3);
    // The idle reader, paused, has its own consumer too, and asks it for nothing until it reads again.
    const idleConsumers = async () => {
      const jsm = await jetstreamManager(nc);
      const all = await jsm.consumers.list(layoutOf({ prefix }).eventsStream).next();
      return all.filter((c) => c.delivered.consumer_seq === 0 && c.num_waiting === 0).length;
    };
    expect(await idleConsumers()).toBe(1);
    flow.resume();
    await idle.reached(39);
    // A reader who comes now reads alone too.
    const late = reader(bounded.follow(id, { after: 35 }));
    await late.reached(39);
    await expect.poll(consumers, { timeout: 10_000 }).toBe(4);
    writeFileSync(join(dir, 'long-2'), '');
    flow.resume();
    const indexes = (events: IndexedEvent[]) => events.map(({ index }) => index);
    const from = (first: number) => Array.from({ length: 50 - first }, (_, i) => first + i);
    expect(indexes(await idle.all)).toEqual(from(0));
    expect(indexes(await fromStart.all)).toEqual(from(0));
    expect(indexes(await fromFifteen.all)).toEqual(from(15));
    expect(indexes(await late.all)).toEqual(from(36));
    expect((await idle.all)[30]!.event).toEqual(JSON.parse(text(30)));
    await expect.poll(consumers, { timeout: 10_000 }).toBe(0);
    await bounded.close();
  });
});
