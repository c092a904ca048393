// A broker that falls behind slows the CLI down instead of failing the run:
// publishTo pauses its source's FlowControl above highWaterBytes awaiting
// storage and resumes it below half, and a worker gives each run's CLI one.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { lastValueFrom, Subject, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvoEvent } from '../../src/events/codecs.js';
import { FlowControl } from '../../src/common/FlowControl.js';
import { fromJetStream, publishTo, submitRun } from '../../src/jetstream/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { TcpProxy } from '../support/tcpProxy.js';
import { BROKER, servedWorker, suiteStreams } from './support.js';
import { ThrottledProxy } from './throttledProxy.js';

const MIB = 1024 * 1024;
const done = '{"type": "done", "content": "", "response": ""}';

/** Resolves once `check` holds, polling; fails after `ms`. */
async function until(check: () => boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
}

describe('publishTo with a FlowControl', () => {
  const { prefix, connection } = suiteStreams('flow');
  const closing: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closing) await close();
  });

  it('pauses the source above highWaterBytes awaiting storage, and resumes it below half', async () => {
    const proxy = await TcpProxy.start(BROKER);
    const writer = await connect({ servers: proxy.url });
    closing.push(
      () => writer.close(),
      () => proxy.close(),
    );
    const flow = new FlowControl();
    const changes: boolean[] = [];
    flow.watch((paused) => changes.push(paused));
    const source = new Subject<EvoEvent>();
    let started = false;
    const publishing = lastValueFrom(
      source.pipe(
        publishTo(writer, 'flow-1', {
          prefix,
          flow,
          highWaterBytes: 100_000,
          maxBufferBytes: 1_000_000,
          onStarted: () => (started = true),
        }),
        toArray(),
      ),
    );
    await until(() => started);
    // Nothing is acknowledged while the link is held: what the source gives waits in the writer.
    proxy.stall();
    const events: EvoEvent[] = Array.from({ length: 30 }, (_, i) => ({
      type: 'text',
      content: `${i} ${'x'.repeat(10_000)}`,
    }));
    let pushed = 0;
    while (!flow.paused && pushed < events.length) source.next(events[pushed++]!);
    // Paused as the bytes held passed 100 000: the eleventh event of some 10 kB.
    expect(pushed).toBe(10);
    expect(changes).toEqual([true]);
    // A source that goes on regardless is still taken, up to maxBufferBytes.
    for (; pushed < events.length; pushed++) source.next(events[pushed]!);
    proxy.resume();
    await until(() => !flow.paused);
    expect(changes).toEqual([true, false]);
    source.complete();
    expect(await publishing).toEqual(events);
    expect(await lastValueFrom(fromJetStream(connection(), 'flow-1', { prefix }).pipe(toArray()))).toEqual(events);
  }, 60_000);
});

describe('a worker on a link slower than its CLI', () => {
  const { prefix, connection } = suiteStreams('slow');
  const LINE = 192 * 1024;
  const COUNT = 64; // 12 MiB, six times maxBufferBytes
  const RATE = 1_500_000; // bytes a second from the worker to the broker: some 8 s for the run
  let proxy: ThrottledProxy;
  let slow: NatsConnection;

  beforeAll(async () => {
    proxy = await ThrottledProxy.start(BROKER, RATE);
    slow = await connect({ servers: proxy.url });
  });
  afterAll(async () => {
    await slow?.close();
    await proxy?.close();
  });

  it('pauses its CLI rather than fail the run: it completes within maxBufferBytes, and nothing is lost', async () => {
    const worker = servedWorker(slow, {
      prefix,
      publish: { maxBufferBytes: 2 * MIB },
      runOptions: fakeEvoSci([{ bigLine: LINE, count: COUNT }, { lines: [done] }]),
    });
    try {
      const started = Date.now();
      const runId = await submitRun(connection(), { prompt: 'slow link' }, { prefix });
      const end = await worker.when((a) => a.runId === runId && ['finished', 'returned'].includes(a.type));
      expect(end).toMatchObject({ type: 'finished', outcome: 'completed' });
      // The link set the pace: the CLI waited on its writes rather than fill memory.
      expect(Date.now() - started).toBeGreaterThan(((LINE * COUNT) / RATE) * 1000 * 0.8);
      const events = await lastValueFrom(fromJetStream(connection(), runId, { prefix }).pipe(toArray()));
      expect(events).toHaveLength(COUNT + 1);
      const content = 'x'.repeat(LINE);
      for (const event of events.slice(0, COUNT))
        expect(event.type === 'tool_result' && event.content === content).toBe(true);
      expect(events.at(-1)).toEqual(JSON.parse(done));
    } finally {
      worker.stop();
    }
  }, 90_000);
});
