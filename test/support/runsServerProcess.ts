// A runs handler in a process of its own, for the tests that try to kill it:
// a crash is then seen (the process exits) rather than taking the test
// runner down. Mounted on `node:http`, Express or Fastify, over a directory
// hub holding finished runs. Prints `{"ready": …}` once it listens, then one
// line per error its `onError` hook is told.
//
//   node --import tsx test/support/runsServerProcess.ts '<RunsServerSettings as JSON>'
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import { runHub, runsHandler, type RunHub, type RunsRequestHandler } from '../../src/runs/index.js';
import { request, scenarioRunOptions } from '../runs/scenarios.js';
import { FailingFollowHub, prepareFailures } from './failingFollowHub.js';
import { isAlive, PATIENCE_MS } from './processes.js';

export interface RunsServerSettings {
  readonly mount: 'node' | 'express' | 'fastify';
  readonly token?: string | undefined;
  /** Where the fake CLI records its processes; the hub's directory is `runs` in it. */
  readonly dir: string;
  /** Serve the failing runs of `FailingFollowHub`, and a run whose events file cannot be read. */
  readonly failing?: boolean | undefined;
  /** `log` (default): the hook prints what it is told; `throws`: it prints, then throws; `none`: no hook given. */
  readonly hook?: 'log' | 'throws' | 'none' | undefined;
}

/** What the process prints once it listens. */
export interface RunsServerReady {
  readonly port: number;
  /** The collection's path: `/runs`, or `/api/runs` under Express. */
  readonly base: string;
  /** A finished run (its events whole), and one whose events file cannot be read (with `failing`). */
  readonly demo: string;
  readonly removed?: string;
}

/** Finished runs in `runs`, served by a hub opened again on the directory: their events are read from their files. */
async function finishedRuns(settings: RunsServerSettings): Promise<{ hub: RunHub; ids: string[] }> {
  const runsDir = join(settings.dir, 'runs');
  const runOptions = scenarioRunOptions(settings.dir);
  const first = await runHub({ dir: runsDir, runOptions });
  const ids: string[] = [];
  for (let i = 0; i < (settings.failing ? 2 : 1); i++) {
    const { id } = await first.start(request('demo'));
    await lastValueFrom(first.follow(id));
    ids.push(id);
  }
  await first.close();
  // The second run's events file becomes a directory: reading it fails with EISDIR, a real I/O error.
  if (ids[1] !== undefined) {
    rmSync(join(runsDir, `${ids[1]}.jsonl`));
    mkdirSync(join(runsDir, `${ids[1]}.jsonl`));
  }
  return { hub: await runHub({ dir: runsDir, runOptions }), ids };
}

/** An error as one line: its class and message, or the value printed. */
function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  try {
    return typeof error === 'object' && error !== null ? `object ${JSON.stringify(error)}` : String(error);
  } catch {
    return 'a value that cannot be printed';
  }
}

function hookOf(settings: RunsServerSettings) {
  if (settings.hook === 'none') return undefined;
  return (error: unknown, req: IncomingMessage) => {
    process.stdout.write(`${JSON.stringify({ reported: describe(error), url: req.url?.slice(0, 200) })}\n`);
    if (settings.hook === 'throws') throw new Error('the hook failed too');
  };
}

async function listen(settings: RunsServerSettings, handler: RunsRequestHandler): Promise<Server> {
  // Large enough that long paths and header values reach the handler instead of Node's own 431.
  const serverOptions = { maxHeaderSize: 1024 * 1024 };
  if (settings.mount === 'express') {
    const { default: express } = await import('express');
    const app = express();
    app.use(express.json());
    app.use('/api', handler);
    return createServer(serverOptions, app).listen(0, '127.0.0.1');
  }
  if (settings.mount === 'fastify') {
    const { default: Fastify } = await import('fastify');
    let server: Server | undefined;
    const app = Fastify({ serverFactory: (listener) => (server = createServer(serverOptions, listener)) });
    app.addHook('onRequest', (req, reply, done) => {
      if (!/^\/runs(\/|$|\?)/.test(req.url)) return done();
      reply.hijack();
      handler(req.raw, reply.raw);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return server!;
  }
  return createServer(serverOptions, handler).listen(0, '127.0.0.1');
}

async function main(settings: RunsServerSettings): Promise<void> {
  const { hub, ids } = await finishedRuns(settings);
  const [demo = '', removed] = ids;
  await prepareFailures();
  const served = settings.failing ? new FailingFollowHub(hub, demo) : hub;
  const runs = runsHandler(served, { token: settings.token, onError: hookOf(settings) });
  // A request marked `x-test-marker` is printed as it comes: whatever the hook printed before is out by then.
  const handler: RunsRequestHandler = (req, res, next) => {
    const marker = req.headers['x-test-marker'];
    if (typeof marker === 'string') process.stdout.write(`${JSON.stringify({ marker })}\n`);
    runs(req, res, next);
  };
  const server = await listen(settings, handler);
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const base = settings.mount === 'express' ? '/api/runs' : '/runs';
  const ready: RunsServerReady = { port, base, demo, ...(removed !== undefined && { removed }) };
  process.stdout.write(`${JSON.stringify({ ready })}\n`);
}

/** The process, seen from a test: what it printed, whether it is alive, and a way to stop it. */
export interface RunsServer {
  readonly ready: RunsServerReady;
  /** Each error its hook was told, as one line (its class and message), in order. */
  readonly reported: string[];
  /** Resolves once the hook has been told `count` errors in all. */
  reports(count: number): Promise<void>;
  /** Resolves once a request with this `x-test-marker` header has reached the handler. */
  marked(marker: string): Promise<void>;
  /** Resolves with what it wrote to stderr (its warnings) once that matches `pattern`. */
  stderrMatching(pattern: RegExp): Promise<string>;
  alive(): boolean;
  stop(): Promise<void>;
}

/** Starts the process and resolves once it listens. */
export async function startRunsServer(settings: RunsServerSettings): Promise<RunsServer> {
  const child: ChildProcessByStdio<null, Readable, Readable> = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), JSON.stringify(settings)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  const reported: string[] = [];
  const markers = new Set<string>();
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    wake();
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
    wake();
  });
  /** Waits for `sign`; a process that exited will give none. */
  const until = async (sign: () => boolean) => {
    while (!sign()) {
      if (exited) throw new Error(`the server process exited: ${stderr}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const ready = await new Promise<RunsServerReady>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { ready?: RunsServerReady; reported?: string; marker?: string };
      if (message.marker !== undefined) markers.add(message.marker);
      if (message.ready) resolve(message.ready);
      if (message.reported !== undefined) reported.push(message.reported);
      wake();
    });
    child.once('exit', (code) => reject(new Error(`the server process exited with ${String(code)}: ${stderr}`)));
    setTimeout(() => reject(new Error(`the server process did not start: ${stderr}`)), PATIENCE_MS).unref();
  });
  return {
    ready,
    reported,
    reports: (count) => until(() => reported.length >= count),
    marked: (marker) => until(() => markers.has(marker)),
    stderrMatching: async (pattern) => {
      await until(() => pattern.test(stderr));
      return stderr;
    },
    alive: () => child.exitCode === null && child.signalCode === null && isAlive(child.pid!),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main(JSON.parse(process.argv[2] ?? '{}') as RunsServerSettings);
}
