// The server side of hub.bench.ts, in a process of its own so that its memory
// is its own: the floor (a bare `node:http` server writing pre-serialised SSE
// frames) or one of the three hubs behind `runsHandler`. It prints
// `{"port": N}` once it listens, and answers the bench on `/bench/*`:
//
//   POST /bench/start?live=<file>[&hold=<file>&holdAfter=N]
//                                    starts the run (the fake CLI waits for <file> when given, and stops
//                                    after N lines until the hold file exists); → {"id"}
//   POST /bench/mark[?gc=1]          samples memory from now: the baseline is the RSS now; with gc, also
//                                    what is held after a full GC
//   GET  /bench/memory               → {"baseline", "peak"}: RSS in bytes, sampled every 10 ms since the mark
//   POST /bench/held                 → {"js", "rss"}: after a full GC, heapUsed + external and RSS, less the
//                                    same after GC at the mark
//
//   node --expose-gc --import tsx test/bench/hub/server.ts <floor|memory|dir|jetstream> <transcript> <gapMs> [broker] [prefix]
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetStreamRunHub } from '../../../src/jetstream/index.js';
import { runHub, runsHandler, type RunHub, type StartRequest } from '../../../src/runs/index.js';
import type { RunOptions } from '../../../src/process/run.js';
import { fakeEvoSci } from '../../../testing/index.js';
import { benchSteps, holdOf, type Hold } from './script.js';

const [kind = 'memory', transcript = '', gap = '0', broker = '', prefix = 'hubbench'] = process.argv.slice(2);
const gapMs = Number(gap);

const steps = (go: string | undefined, hold?: Hold) => benchSteps(transcript, gapMs, go, hold);

/** What the process holds once its garbage is collected: the JS heap in use, memory outside it (buffers), and RSS. */
function heldAfterGc(): { js: number; rss: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('start the server with --expose-gc');
  gc();
  gc();
  // `external` already counts `arrayBuffers` (Node's own Buffers among them).
  const { heapUsed, external, rss } = process.memoryUsage();
  return { js: heapUsed + external, rss };
}

/** RSS sampled from a mark: what the readers cost the server; and what its broker connection took in since. */
class MemorySampler {
  private baseline = process.memoryUsage.rss();
  private peak = this.baseline;
  private stats = { inMsgs: 0, inBytes: 0 };
  private held = { js: 0, rss: 0 };
  constructor() {
    setInterval(() => (this.peak = Math.max(this.peak, process.memoryUsage.rss())), 10).unref();
  }
  mark(gc: boolean): void {
    this.baseline = process.memoryUsage.rss();
    this.peak = this.baseline;
    this.stats = nc?.stats() ?? this.stats;
    if (gc) this.held = heldAfterGc();
  }
  /** What the process holds after GC now, less what it held after GC at the mark. */
  heldSinceMark(): { js: number; rss: number } {
    const now = heldAfterGc();
    return { js: now.js - this.held.js, rss: now.rss - this.held.rss };
  }
  read(): { baseline: number; peak: number; received?: { msgs: number; bytes: number } } {
    const now = nc?.stats();
    const received = now && { msgs: now.inMsgs - this.stats.inMsgs, bytes: now.inBytes - this.stats.inBytes };
    return {
      baseline: this.baseline,
      peak: Math.max(this.peak, process.memoryUsage.rss()),
      ...(received && { received }),
    };
  }
}

/** The floor: each connection gets the same frames, one `res.write` each, waiting for 'drain' when told to. */
class Floor {
  private readonly frames: string[] = [];
  private ended = false;
  private readonly waiting = new Set<() => void>();

  start(go: string | undefined, hold: Hold | undefined): Promise<string> {
    const fake = fakeEvoSci(steps(go, hold));
    const child = spawn(fake.command, ['-p', 'floor'], {
      env: { ...process.env, ...fake.env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (!line.trim()) return;
      this.frames.push(`id: ${this.frames.length}\ndata: ${JSON.stringify(JSON.parse(line))}\n\n`);
      this.wake();
    });
    const ended = new Promise<void>((resolve) => lines.once('close', resolve)).then(() => {
      this.ended = true;
      this.wake();
    });
    return go ? Promise.resolve('floor') : ended.then(() => 'floor');
  }

  async serve(res: ServerResponse): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
    res.flushHeaders();
    let closed = false;
    res.once('close', () => (closed = true));
    let next = 0;
    for (;;) {
      while (next < this.frames.length && !closed) {
        if (!res.write(this.frames[next++]!)) await new Promise((resolve) => res.once('drain', resolve));
      }
      if (closed) return;
      if (this.ended && next >= this.frames.length) break;
      await new Promise<void>((resolve) => this.waiting.add(resolve));
    }
    res.end(`event: end\nid: ${next}\ndata: {"state":"completed"}\n\n`);
  }

  private wake(): void {
    for (const resolve of this.waiting) resolve();
    this.waiting.clear();
  }
}

/** How a local hub starts the fake CLI: the request's metadata names the file a live run waits for. */
const runOptions = (request: StartRequest): RunOptions => ({
  prompt: request.prompt,
  ...fakeEvoSci(steps(request.metadata?.['go'] || undefined, holdOf(request.metadata))),
});

let nc: NatsConnection | undefined;

async function hubOf(): Promise<RunHub> {
  if (kind === 'memory') return runHub({ maxLive: 8, runOptions });
  if (kind === 'dir')
    return runHub({ maxLive: 8, runOptions, dir: mkdtempSync(join(tmpdir(), 'evosci-rx-hubbench-')) });
  nc = await connect({ servers: broker });
  return jetStreamRunHub(nc, { prefix });
}

/** Starts a run on the hub and, for a replay, waits until it has ended. */
async function startOn(hub: RunHub, go: string | undefined, hold: Hold | undefined): Promise<string> {
  const metadata = { go: go ?? '', transcript, gap, ...(hold && { hold: hold.file, holdAfter: String(hold.after) }) };
  const { id } = await hub.start({ prompt: 'hub bench', metadata });
  if (go) return id;
  for (;;) {
    const { state } = await hub.status(id);
    if (state !== 'running' && state !== 'queued') return id;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const memory = new MemorySampler();
const floor = kind === 'floor' ? new Floor() : undefined;
const hub = floor ? undefined : await hubOf();
const handler = hub && runsHandler(hub);

async function bench(res: ServerResponse, url: URL): Promise<void> {
  const json = (value: unknown) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  if (url.pathname === '/bench/mark') return void (memory.mark(url.searchParams.has('gc')), json({}));
  if (url.pathname === '/bench/memory') return void json(memory.read());
  if (url.pathname === '/bench/held') return void json(memory.heldSinceMark());
  const go = url.searchParams.get('live') ?? undefined;
  const hold = holdOf(Object.fromEntries(url.searchParams));
  const id = floor ? await floor.start(go, hold) : await startOn(hub!, go, hold);
  json({ id });
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname.startsWith('/bench/'))
    return void bench(res, url).catch((err: unknown) => res.writeHead(500).end(String(err)));
  if (floor) return void floor.serve(res);
  handler!(req, res);
});
server.maxConnections = 100_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
