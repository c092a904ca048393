/**
 * What a hub costs to serve: one run's events to many SSE readers, against
 * a floor measured in the same run. Each server runs in a process of its own
 * (its memory is its own), the readers in another (`hub/readers.ts`: N
 * connections, each checking every frame comes in order, then `end`).
 *
 *   floor      a bare `node:http` server writing the same pre-serialised SSE
 *              frames to each connection, one `res.write` each, waiting for
 *              'drain' when `write` says so
 *   memory     runHub() in memory, behind runsHandler
 *   dir        runHub({ dir }), behind runsHandler
 *   jetstream  jetStreamRunHub, behind runsHandler; a serveRuns worker in
 *              this process runs the fake CLI ($EVOSCI_RX_NATS, else a
 *              nats-server of its own)
 *
 * Three measures, each at every reader count:
 *   replay   the run ended, then the readers connect: events/s = readers × events / time to the last `end`
 *   live     the readers connect, then the fake CLI writes the run at full speed: the same, from its first line
 *   paced    the fake CLI writes one event every `--gap` ms: the p99 of the time from the CLI's line
 *            (its `written_at`) to the reader's frame, over every tenth reader
 * Memory per reader is the server's peak RSS, sampled every 10 ms, less its
 * RSS before the readers came, divided by the readers: garbage not yet
 * collected counts. Memory held per reader is weighed on the paced run: the
 * CLI stops half-way, once every reader has read that half, the server (run
 * with --expose-gc) collects its garbage and gives its heapUsed + external
 * and its RSS, less the same after GC before the readers came, divided by
 * the readers; then the CLI goes on. For the JetStream
 * hub: the most consumers on the events stream while the readers read, the
 * messages the hub's connection took in, and how much the broker's RSS grew
 * (a broker this bench started; `–` for the suite's).
 *
 * ```bash
 * npx tsx test/bench/hub.bench.ts                  # 2,000 events; 200 and 1,000 readers; 500 paced events 20 ms apart
 * npx tsx test/bench/hub.bench.ts --smoke          # 200 events, 20 readers; 40 paced events 5 ms apart
 * npx tsx test/bench/hub.bench.ts --readers 1000 --hubs memory --modes replay,live
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { ensureStreams, layoutOf, serveRuns } from '../../src/jetstream/index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { largeTranscript } from '../fixtures/producer.js';
import { natsUrl, ownBroker, type OwnBroker } from '../support/natsServer.js';
import { benchSteps, holdOf, type Hold } from './hub/script.js';
import { table } from './report.js';

const { values: flags } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    events: { type: 'string' },
    readers: { type: 'string' },
    hubs: { type: 'string' },
    gap: { type: 'string' },
    paced: { type: 'string' },
    modes: { type: 'string' },
  },
});
const events = Number(flags.events ?? (flags.smoke ? 200 : 2000));
const readerCounts = (flags.readers ?? (flags.smoke ? '20' : '200,1000')).split(',').map(Number);
const kinds = (flags.hubs ?? 'memory,dir,jetstream').split(',');
const gapMs = Number(flags.gap ?? (flags.smoke ? 5 : 20));
const pacedEvents = Number(flags.paced ?? (flags.smoke ? 40 : 500));
const modes = (flags.modes ?? 'replay,live,paced').split(',') as Mode[];
const root = new URL('../../', import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'evosci-rx-hubbench-'));
const prefix = `hubbench${process.pid}`;

type Mode = 'replay' | 'live' | 'paced';

/** One measure of one server. */
interface Figures {
  /** Readers that did not get every event in order and the end: the figures of the others. */
  readonly failed: number;
  readonly eventsPerSecond: number;
  readonly kibPerReader: number;
  /** Paced only: KiB per reader held after GC mid-run, in heapUsed + external and in RSS. */
  readonly held?: { js: number; rss: number } | undefined;
  readonly p99: number;
  readonly p50: number;
  /** JetStream only: the most consumers on the events stream while the readers read, and what the hub's connection took in. */
  readonly broker?: BrokerCost | undefined;
  readonly received?: { msgs: number; bytes: number };
}

/** The first `count` events of a mixed transcript, and `done`. */
function transcriptOf(count: number): string {
  const source = largeTranscript({ mb: 2, textShare: 0.3 });
  const lines = readFileSync(source.path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(0, count - 1);
  const file = join(work, `run-${count}.jsonl`);
  writeFileSync(file, `${[...lines, '{"type": "done", "content": "", "response": "done"}'].join('\n')}\n`);
  return file;
}

/** A child process whose stdout is JSON lines, read one at a time. */
class Child {
  private readonly lines: AsyncIterator<string>;
  constructor(readonly process: ChildProcess) {
    this.lines = createInterface({ input: process.stdout! })[Symbol.asyncIterator]();
  }
  static tsx(file: string, args: readonly string[], node: readonly string[] = []): Child {
    const child = spawn(process.execPath, [...node, '--import', 'tsx', file, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    return new Child(child);
  }
  async next<T>(): Promise<T> {
    const { value, done } = await this.lines.next();
    if (done) throw new Error(`the child exited (${String(this.process.exitCode ?? this.process.signalCode)})`);
    return JSON.parse(value) as T;
  }
  stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.process.once('exit', () => resolve());
      this.process.kill('SIGKILL');
    });
  }
}

async function call<T>(origin: string, path: string, method = 'POST'): Promise<T> {
  const res = await fetch(`${origin}${path}`, { method });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The RSS of the nats-server this bench started (its own child), from /proc; none for a broker of someone else's. */
function brokerRss(): number | undefined {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // `pid (comm) state ppid …`
      const [, comm, ppid] = /^\d+ \((.*)\) \S+ (\d+)/.exec(stat) ?? [];
      if (comm !== 'nats-server' || Number(ppid) !== process.pid) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return rss ? Number(rss[1]) * 1024 : undefined;
    } catch {
      // A process that ended as it was looked at.
    }
  }
  return undefined;
}

/** What the broker bore while the readers read: the most consumers on the events stream, and its RSS growth. */
interface BrokerCost {
  readonly consumers: number;
  readonly rssGrowth: number | undefined;
}

/** Samples the broker every 50 ms until told to stop. */
function watchBroker(nc: NatsConnection | undefined): () => Promise<BrokerCost | undefined> {
  if (!nc) return () => Promise.resolve(undefined);
  let consumers = 0;
  const base = brokerRss();
  let peak = base;
  let stopped = false;
  const stream = layoutOf({ prefix }).eventsStream;
  const sampling = (async () => {
    const jsm = await jetstreamManager(nc);
    while (!stopped) {
      const info = await jsm.streams.info(stream);
      consumers = Math.max(consumers, info.state.consumer_count);
      const rss = brokerRss();
      if (rss !== undefined && peak !== undefined) peak = Math.max(peak, rss);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return async () => {
    stopped = true;
    await sampling;
    return { consumers, rssGrowth: base === undefined || peak === undefined ? undefined : peak - base };
  };
}

/** Serves one run to `readers` readers from a fresh server process, and measures it. */
async function measure(
  kind: string,
  mode: Mode,
  readers: number,
  broker: string,
  nc?: NatsConnection,
): Promise<Figures> {
  const count = mode === 'paced' ? pacedEvents : events;
  const server = Child.tsx(
    'test/bench/hub/server.ts',
    [kind === 'floor' ? 'floor' : kind, transcriptOf(count), String(mode === 'paced' ? gapMs : 0), broker, prefix],
    ['--expose-gc'],
  );
  const reading: Child[] = [];
  try {
    const { port } = await server.next<{ port: number }>();
    const origin = `http://127.0.0.1:${port}`;
    const go = join(work, `go-${kind}-${mode}-${readers}`);
    const hold: Hold | undefined =
      mode === 'paced' ? { file: join(work, `hold-${kind}-${readers}`), after: Math.floor(count / 2) } : undefined;
    const holding = hold ? `&hold=${hold.file}&holdAfter=${hold.after}` : '';
    const { id } = await call<{ id: string }>(
      origin,
      mode === 'replay' ? '/bench/start' : `/bench/start?live=${go}${holding}`,
    );
    await call(origin, hold ? '/bench/mark?gc=1' : '/bench/mark');
    const broker = watchBroker(nc);
    const path = kind === 'floor' ? '/floor' : `/runs/${id}/events`;
    const child = Child.tsx('test/bench/hub/readers.ts', [
      `${origin}${path}`,
      String(readers),
      String(count),
      String(hold?.after ?? 0),
    ]);
    reading.push(child);
    await child.next<{ connected: number }>();
    const wentAt = performance.timeOrigin + performance.now();
    if (mode !== 'replay') writeFileSync(go, '');
    const held = hold && (await weighHeld(origin, child, hold, readers));
    const result = await child.next<{
      started: number;
      ended: number;
      failed: number;
      failures: string[];
      p50: number;
      p99: number;
    }>();
    if (result.failed > 0)
      console.log(`${kind} ${mode} ${readers}: ${result.failed} readers failed: ${result.failures.join('; ')}`);
    const memory = await call<{ baseline: number; peak: number; received?: { msgs: number; bytes: number } }>(
      origin,
      '/bench/memory',
      'GET',
    );
    const seconds = (result.ended - (mode === 'replay' ? result.started : wentAt)) / 1000;
    return {
      failed: result.failed,
      eventsPerSecond: (readers * count) / seconds,
      kibPerReader: (memory.peak - memory.baseline) / 1024 / readers,
      held,
      p50: result.p50,
      p99: result.p99,
      ...(nc && { broker: await broker(), received: memory.received }),
    };
  } finally {
    for (const child of reading) await child.stop();
    await server.stop();
  }
}

/** Once every reader has read the first half of a held run: what the server holds per reader after GC; then lets it go on. */
async function weighHeld(
  origin: string,
  readers: Child,
  hold: Hold,
  count: number,
): Promise<{ js: number; rss: number }> {
  await readers.next<{ holding: number }>();
  const held = await call<{ js: number; rss: number }>(origin, '/bench/held');
  writeFileSync(hold.file, '');
  return { js: held.js / 1024 / count, rss: held.rss / 1024 / count };
}

/** A serveRuns worker in this process, for the JetStream hub's runs. */
async function jetStreamWorker(url: string): Promise<{ nc: NatsConnection; stop: () => Promise<void> }> {
  const nc = await connect({ servers: url });
  await ensureStreams(nc, { prefix });
  const subscription = serveRuns(nc, {
    prefix,
    concurrency: 4,
    runOptions: (request) => {
      const { transcript = '', gap = '0', go } = request.metadata ?? {};
      const steps = benchSteps(transcript, Number(gap), go || undefined, holdOf(request.metadata));
      return { prompt: request.prompt, ...fakeEvoSci(steps) };
    },
  }).subscribe({ error: (err: unknown) => console.error(`worker failed: ${String(err)}`) });
  return { nc, stop: async () => (subscription.unsubscribe(), await nc.drain()) };
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

let own: OwnBroker | undefined;
let worker: Awaited<ReturnType<typeof jetStreamWorker>> | undefined;
try {
  let broker = '';
  if (kinds.includes('jetstream')) {
    broker = process.env['EVOSCI_RX_NATS']
      ? natsUrl()
      : await ownBroker().then(async (b) => (await b.start(), (own = b), b.url));
    worker = await jetStreamWorker(broker);
  }
  console.log(
    `hub fan-out: ${events} mixed events (paced: ${pacedEvents}, ${gapMs} ms apart), readers ${readerCounts.join(', ')}; ` +
      `node ${process.version}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const floor = new Map<string, Figures>();
  const results = new Map<string, Figures>();
  for (const readers of readerCounts)
    for (const mode of modes) {
      floor.set(`${readers} ${mode}`, await measure('floor', mode, readers, broker));
      for (const kind of kinds)
        results.set(
          `${kind} ${readers} ${mode}`,
          await measure(kind, mode, readers, broker, kind === 'jetstream' ? worker?.nc : undefined),
        );
    }
  for (const kind of ['floor', ...kinds]) {
    const rows: string[][] = [];
    for (const readers of readerCounts)
      for (const mode of modes.filter((m) => m !== 'paced')) {
        const base = floor.get(`${readers} ${mode}`)!;
        const f = kind === 'floor' ? base : results.get(`${kind} ${readers} ${mode}`)!;
        const paced = kind === 'floor' ? floor.get(`${readers} paced`) : results.get(`${kind} ${readers} paced`);
        rows.push([
          `${fmt(readers)} ${mode}`,
          f.failed > 0 ? `(${f.failed} failed) ${fmt(f.eventsPerSecond)}` : fmt(f.eventsPerSecond),
          `${(f.eventsPerSecond / base.eventsPerSecond).toFixed(2)}×`,
          fmt(f.kibPerReader, 1),
          mode === 'live' && paced ? `${fmt(paced.p99, 1)} ms` : '',
          mode === 'live' && paced?.held ? `${fmt(paced.held.js, 1)} / ${fmt(paced.held.rss, 1)}` : '',
          f.broker === undefined
            ? ''
            : `${f.broker.consumers} / ${fmt(f.received!.msgs)} / ${f.broker.rssGrowth === undefined ? '–' : fmt(f.broker.rssGrowth / 1024 / 1024, 1)}`,
        ]);
      }
    console.log(`\n${kind}`);
    console.log(
      table(
        [
          'readers',
          'events/s',
          '× floor',
          'KiB per reader, peak',
          'p99 added (paced)',
          'KiB held per reader, after GC (JS / RSS)',
          'consumers / msgs in / broker MiB',
        ],
        rows,
      ),
    );
  }
} finally {
  await worker?.stop();
  await own?.dispose();
  rmSync(work, { recursive: true, force: true });
}
