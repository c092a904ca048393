/**
 * Throughput and latency of runs through JetStream, against the nats client's
 * own publish and consume of the same payloads, in the same process and
 * against the same broker ($EVOSCI_RX_NATS, else nats-server at 127.0.0.1:4222;
 * under vitest, the suite's own).
 *
 *   (raw)  js.publish of each JSON line (at most 256 awaiting an ack, as
 *          publishTo), read back by an ordered consumer on another connection
 *   (ours) run() of the fake CLI writing the same lines → publishTo →
 *          JetStream → fromJetStream on another connection, decoded and
 *          validated like run()
 *
 * Rounds are interleaved (raw, ours, raw, ours…), each into a fresh stream
 * with file storage, and the medians compared. Latency: the same lines paced
 * `--gap` ms apart, each stamped with the time it is written (by the fake CLI
 * for ours, before js.publish for raw) and measured on receipt: for ours that
 * covers the CLI's pipe, decoding, the publish and the consumer.
 *
 * With `--rtt`, both connections go through a delay proxy in a process of
 * its own (`test/support/tcpProxy.ts`, half the round-trip time each way, in order),
 * as a worker and a reader on other hosts would reach the broker; the rounds
 * go through every round-trip time in turn, and a table compares them.
 *
 * ```bash
 * npx tsx test/bench/jetstream.bench.ts              # 50,000 events, 3 rounds; 2,000 paced events
 * npx tsx test/bench/jetstream.bench.ts --smoke      # 2,000 events, 1 round; 200 paced events
 * npx tsx test/bench/jetstream.bench.ts --rtt 0,10,25,50   # 20,000 events, 3 rounds at each round-trip time
 * npx tsx test/bench/jetstream.bench.ts --smoke --rtt 0,10
 * ```
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { lastValueFrom, tap } from 'rxjs';
import { run } from '../../src/process/run.js';
import { ensureStreams, fromJetStream, layoutOf, publishTo } from '../../src/jetstream/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import type { ChildProcess } from 'node:child_process';
import { natsUrl } from '../support/natsServer.js';
import { startProxyProcess } from '../support/proxyProcess.js';
import { table } from './report.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string' },
    rounds: { type: 'string' },
    gap: { type: 'string', default: '2' },
    smoke: { type: 'boolean', default: false },
    traces: { type: 'boolean', default: false },
    rtt: { type: 'string' },
  },
});
/** Round-trip times to measure at through a delay proxy, or none: straight to the broker. */
const rtts = flags.rtt === undefined ? [] : flags.rtt.split(',').map(Number);
if (rtts.some((rtt) => !(rtt >= 0))) throw new TypeError(`--rtt takes milliseconds ≥ 0, got ${flags.rtt}`);
const count = Number(flags.events ?? (flags.smoke ? 2000 : rtts.length > 0 ? 20_000 : 50_000));
const rounds = Number(flags.rounds ?? (flags.smoke ? 1 : 3));
const pacedCount = flags.smoke ? 200 : 2000;
const gap = Number(flags.gap);
const server = natsUrl();
const WINDOW = 256;

// Real shapes: the lines of the research fixture, over and over, then done.
const fixture = readFileSync(new URL('../fixtures/research-run.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.includes('"type": "done"'));
const lines = Array.from({ length: count - 1 }, (_, i) => fixture[i % fixture.length]!);
lines.push('{"type": "done", "content": "x", "response": "x"}');
// The fake CLI reads them from a file: a script this long does not fit in its environment.
const transcriptFile = join(mkdtempSync(join(tmpdir(), 'evosci-rx-bench-')), 'run.jsonl');
writeFileSync(transcriptFile, lines.map((l) => `${l}\n`).join(''));
const pacedFile = `${transcriptFile}.paced`;
writeFileSync(pacedFile, [...lines.slice(0, pacedCount - 1), lines.at(-1)!].map((l) => `${l}\n`).join(''));
const payloads = lines.map((l) => new TextEncoder().encode(`${l}\n`));
const bytes = payloads.reduce((sum, p) => sum + p.length, 0);
const now = () => performance.timeOrigin + performance.now();

/** The two connections a measurement uses: the writer's and the reader's. */
interface Link {
  readonly publisher: NatsConnection;
  readonly reader: NatsConnection;
}
// Both variants share these connections. noAsyncTraces (--traces to turn traces back on) spares
// the client an Error and its stack trace per request, which otherwise costs more than our whole path.
const connectTo = (servers: string) => connect({ servers, timeout: 3000, noAsyncTraces: !flags.traces });
let direct: Link;
try {
  direct = { publisher: await connectTo(server), reader: await connectTo(server) };
} catch (err) {
  console.error(`jetstream.bench needs nats-server -js at ${server}: ${(err as Error).message}`);
  process.exit(1);
}
// Streams are made and removed straight, off any delayed link: setting up is not measured.
const jsm = await jetstreamManager(direct.publisher);
let streamNumber = 0;

/** Paced events' latencies, collected as they are received. */
interface Stamps {
  readonly gapMs: number;
  readonly latencies: number[];
}

/** Seconds of one pass, from its first event: until the last is stored (acknowledged), and until the last is read. */
interface Seconds {
  readonly published: number;
  readonly read: number;
}

/** A fresh pair of streams for one measurement; deleted after it. */
async function freshPrefix(): Promise<{ prefix: string; done: () => Promise<void> }> {
  const prefix = `bench-${process.pid}-${streamNumber++}`;
  await ensureStreams(direct.publisher, { prefix, storage: 'file' });
  const layout = layoutOf({ prefix });
  return {
    prefix,
    done: async () => {
      await jsm.streams.delete(layout.eventsStream).catch(() => undefined);
      await jsm.streams.delete(layout.requestsStream).catch(() => undefined);
    },
  };
}

/** The client alone: publish every payload with ≤ WINDOW awaiting acks; an ordered consumer reads them back. */
async function raw({ publisher, reader }: Link, stamps?: Stamps): Promise<Seconds> {
  const { prefix, done } = await freshPrefix();
  const layout = layoutOf({ prefix });
  const subject = layout.attemptSubject('raw', 1);
  const total = stamps ? pacedCount : count;
  const consumer = await jetstream(reader).consumers.get(layout.eventsStream, {
    filter_subjects: subject,
    deliver_policy: DeliverPolicy.All,
  });
  const started = performance.now();
  let received = 0;
  const all = new Promise<void>((resolve) => {
    void consumer.consume({
      callback: (m) => {
        if (stamps) {
          const at = (JSON.parse(m.string()) as { written_at: number }).written_at;
          stamps.latencies.push(now() - at);
        } else JSON.parse(m.string());
        if (++received === total) resolve();
      },
    });
  });
  const js = jetstream(publisher);
  // At most WINDOW publishes awaiting their ack; a counter and one waiter, so the baseline spends nothing on bookkeeping.
  let inFlight = 0;
  let slot: (() => void) | undefined;
  let failure: unknown;
  const settle = () => {
    inFlight--;
    const wake = slot;
    slot = undefined;
    wake?.();
  };
  for (let i = 0; i < total; i++) {
    if (stamps) {
      await new Promise((r) => setTimeout(r, stamps.gapMs));
      const line = lines[i]!.replace(/}\s*$/, `, "written_at": ${now()}}\n`);
      inFlight++;
      js.publish(subject, line).then(settle, (err: unknown) => (failure = err));
    } else {
      while (inFlight >= WINDOW) await new Promise<void>((resolve) => (slot = resolve));
      inFlight++;
      js.publish(subject, payloads[i]).then(settle, (err: unknown) => (failure = err));
    }
  }
  while (inFlight > 0 && failure === undefined) await new Promise<void>((resolve) => (slot = resolve));
  if (failure !== undefined) throw failure instanceof Error ? failure : new Error('publish failed', { cause: failure });
  const published = (performance.now() - started) / 1000;
  await all;
  const seconds = (performance.now() - started) / 1000;
  await consumer.delete().catch(() => undefined);
  await done();
  return { published, read: seconds };
}

/** run() of the fake CLI → publishTo → JetStream → fromJetStream. */
async function ours({ publisher, reader }: Link, stamps?: Stamps): Promise<Seconds> {
  const { prefix, done } = await freshPrefix();
  const steps = stamps
    ? [{ transcript: pacedFile, delayMs: stamps.gapMs, stamp: true }]
    : [{ transcript: transcriptFile }];
  const expected = stamps ? pacedCount : count;
  // Timed from the first event the CLI wrote: starting a process is not throughput (its time is printed apart).
  const subscribed = performance.now();
  let started = 0;
  let received = 0;
  const remote = lastValueFrom(
    fromJetStream(reader, 'ours', { prefix }).pipe(
      tap((event) => {
        received++;
        const at = (event as { written_at?: number }).written_at;
        if (stamps && at !== undefined) stamps.latencies.push(now() - at);
      }),
    ),
  );
  await lastValueFrom(
    run({ prompt: 'bench', ...fakeEvoSci(steps) }).pipe(
      tap(() => {
        if (started === 0) {
          started = performance.now();
          spawnMs.push(started - subscribed);
        }
      }),
      publishTo(publisher, 'ours', { prefix, maxPendingAcks: WINDOW }),
    ),
  );
  const published = performance.now();
  await remote;
  const seconds = (performance.now() - started) / 1000;
  if (process.env['BENCH_ONLY'])
    console.log(`  published after ${((published - started) / 1000).toFixed(3)} s, read after ${seconds.toFixed(3)} s`);
  if (received !== expected) throw new Error(`fromJetStream received ${received} events, expected ${expected}`);
  await done();
  return { published: (published - started) / 1000, read: seconds };
}

const spawnMs: number[] = [];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantiles = (xs: number[]) => {
  const sorted = xs.slice(Math.min(50, Math.floor(xs.length / 10))).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1)! };
};

// BENCH_ONLY=ours or raw: that variant alone, for a CPU profile.
if (process.env['BENCH_ONLY']) {
  for (let r = 0; r < rounds; r++)
    console.log(
      process.env['BENCH_ONLY'],
      process.env['BENCH_ONLY'] === 'raw' ? (await raw(direct)).read : (await ours(direct)).read,
    );
  process.exit(0);
}
const rate = (seconds: number) => count / seconds;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (v: number) => `${v.toFixed(3)} ms`;
const header = (where: string) =>
  `JetStream throughput: ${count} events (${(bytes / 1e6).toFixed(1)} MB), ${rounds} round(s), ${where}, async traces ${flags.traces ? 'on' : 'off'}, node ${process.version}`;

/** Straight to the broker: throughput of each variant, their ratio, and the latency of each. */
async function straight(): Promise<void> {
  // One untimed warm-up of each.
  await raw(direct);
  await ours(direct);
  const times = { raw: [] as number[], ours: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    times.raw.push((await raw(direct)).read);
    times.ours.push((await ours(direct)).read);
  }
  const rawLatency = { gapMs: gap, latencies: [] as number[] };
  const ourLatency = { gapMs: gap, latencies: [] as number[] };
  await raw(direct, rawLatency);
  await ours(direct, ourLatency);

  console.log(header(`broker ${server}`));
  console.log(
    `  (raw)  nats client publish + ordered consumer   ${median(times.raw).toFixed(3)} s   ${fmt(rate(median(times.raw)))} events/s`,
  );
  console.log(
    `  (ours) run() → publishTo → fromJetStream        ${median(times.ours).toFixed(3)} s   ${fmt(rate(median(times.ours)))} events/s`,
  );
  const ratio = median(times.raw) / median(times.ours);
  console.log(
    `  ratio (ours / raw): ${ratio.toFixed(2)}×   (ours timed from its first event; spawning the CLI took a median ${median(spawnMs).toFixed(0)} ms more)`,
  );
  for (const [name, { latencies }] of [
    ['raw ', rawLatency],
    ['ours', ourLatency],
  ] as const) {
    const q = quantiles(latencies);
    console.log(
      `latency (${name}) ${latencies.length} events ${gap} ms apart:  p50 ${ms(q.p50)}   p90 ${ms(q.p90)}   p99 ${ms(q.p99)}   max ${ms(q.max)}`,
    );
  }
  if (!flags.smoke) {
    console.log(`  target ≥ 0.8× raw throughput: ${ratio >= 0.8 ? 'met' : 'missed'}`);
    console.log(`  target p99 < 10 ms: ${quantiles(ourLatency.latencies).p99 < 10 ? 'met' : 'missed'}`);
  }
}

/** What is measured at one round-trip time. */
interface AtRtt {
  readonly rtt: number;
  readonly proxy: ChildProcess;
  readonly link: Link;
  readonly times: { raw: Seconds[]; ours: Seconds[] };
  readonly latency: { raw: Stamps; ours: Stamps };
}

/** Through a delay proxy at each round-trip time: rounds interleaved across them, then a table. */
async function acrossRtts(): Promise<void> {
  const points: AtRtt[] = [];
  for (const rtt of rtts) {
    const { url, child: proxy } = await startProxyProcess(server, rtt / 2);
    const link = { publisher: await connectTo(url), reader: await connectTo(url) };
    const stamps = () => ({ gapMs: gap, latencies: [] as number[] });
    points.push({ rtt, proxy, link, times: { raw: [], ours: [] }, latency: { raw: stamps(), ours: stamps() } });
  }
  // One untimed warm-up of each, straight.
  await raw(direct);
  await ours(direct);
  for (let r = 0; r < rounds; r++) {
    for (const { link, times } of points) {
      times.raw.push(await raw(link));
      times.ours.push(await ours(link));
    }
  }
  for (const { link, latency } of points) {
    await raw(link, latency.raw);
    await ours(link, latency.ours);
  }
  console.log(header(`through a delay proxy to ${server}, at most ${WINDOW} publishes awaiting their ack`));
  const column = (kind: keyof Seconds) => (xs: Seconds[]) => median(xs.map((x) => x[kind]));
  for (const [what, of] of [
    ['published (every ack back)', column('published')],
    ['read back by the remote reader', column('read')],
  ] as const) {
    console.log(`throughput, ${what}:`);
    const rows = points.map(({ rtt, times }) => {
      const [r, o] = [of(times.raw), of(times.ours)];
      return [`${rtt} ms`, fmt(rate(r)), fmt(rate(o)), `${(r / o).toFixed(2)}×`];
    });
    console.log(table(['RTT', 'raw events/s', 'ours events/s', 'ours / raw'], rows));
  }
  console.log(`latency, ${pacedCount} events ${gap} ms apart, from the write to the remote reader:`);
  const rows = points.map(({ rtt, latency }) => {
    const [lr, lo] = [quantiles(latency.raw.latencies), quantiles(latency.ours.latencies)];
    return [`${rtt} ms`, ms(lr.p50), ms(lr.p99), ms(lo.p50), ms(lo.p99)];
  });
  console.log(table(['RTT', 'raw p50', 'raw p99', 'ours p50', 'ours p99'], rows));
  for (const { proxy, link } of points) {
    await link.publisher.close();
    await link.reader.close();
    proxy.kill();
  }
}

await (rtts.length > 0 ? acrossRtts() : straight());
await direct.publisher.close();
await direct.reader.close();
rmSync(dirname(transcriptFile), { recursive: true, force: true });
