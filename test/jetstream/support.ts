// What the JetStream tests share: a connection to the project's broker
// (127.0.0.1:4222), a prefix of their own so that files never collide, and
// clean-up of what they created.
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import type { EvoEvent } from '../../src/events.js';
import { beforeAll, afterAll } from 'vitest';
import { filter, firstValueFrom, lastValueFrom, ReplaySubject, takeWhile, toArray } from 'rxjs';
import {
  ensureStreams,
  layoutOf,
  serveRuns,
  watchRuns,
  type JetStreamLayout,
  type ServeRunsOptions,
  type StatusRecord,
  type WorkerActivity,
} from '../../src/jetstream/index.js';
import { fixturePath } from '../support/collect.js';

export const BROKER = process.env['EVOSCI_RX_NATS'] ?? '127.0.0.1:4222';

/** The events of a JSONL fixture, as a run of it emits them. */
export function fixtureEvents(name: string): EvoEvent[] {
  return readFileSync(fixturePath(name), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as EvoEvent);
}

/** The status records of one run, from the stream's start up to its first `finished` record. */
export function recordsUntilFinished(nc: NatsConnection, prefix: string, runId: string): Promise<StatusRecord[]> {
  return lastValueFrom(
    watchRuns(nc, { prefix, from: 'start' }).pipe(
      filter((r) => r.runId === runId),
      takeWhile((r) => r.record !== 'finished', true),
      toArray(),
    ),
  );
}

/** A fresh prefix: `t<uuid>` cut to a subject token. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${randomUUID().slice(0, 8)}`;
}

/** Connects, with a clear failure if the broker is not there. */
export async function connectBroker(servers = BROKER): Promise<NatsConnection> {
  try {
    return await connect({ servers, timeout: 3000 });
  } catch (err) {
    throw new Error(`the JetStream tests need nats-server -js at ${servers}: ${(err as Error).message}`);
  }
}

/**
 * For one describe block: a fresh prefix and its layout, and (from its
 * `beforeAll` on) a connection and the prefix's streams, removed after it.
 */
export function suiteStreams(name: string): {
  readonly prefix: string;
  readonly layout: JetStreamLayout;
  connection(): NatsConnection;
} {
  const prefix = uniquePrefix(name);
  let nc: NatsConnection | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    nc = await connectBroker();
    cleanup = await streamsFor(nc, prefix);
  });
  afterAll(async () => {
    await cleanup?.();
    await nc?.close();
  });
  return { prefix, layout: layoutOf({ prefix }), connection: () => nc! };
}

/** A `serveRuns` worker in this process; `when` finds the first activity that matches, however early it came. */
export function servedWorker(
  nc: NatsConnection,
  options: ServeRunsOptions,
): { when(match: (a: WorkerActivity) => boolean): Promise<WorkerActivity>; stop(): void } {
  const activity$ = new ReplaySubject<WorkerActivity>();
  const subscription = serveRuns(nc, options).subscribe(activity$);
  return {
    when: (match) => firstValueFrom(activity$.pipe(filter(match))),
    stop: () => subscription.unsubscribe(),
  };
}

/** Creates the streams of `prefix`; the returned function deletes them. */
export async function streamsFor(
  nc: NatsConnection,
  prefix: string,
  options: { storage?: 'file' | 'memory' } = {},
): Promise<() => Promise<void>> {
  await ensureStreams(nc, { prefix, storage: options.storage ?? 'memory', eventsMaxAgeMs: 10 * 60 * 1000 });
  return () => deleteStreams(nc, prefix);
}

export async function deleteStreams(nc: NatsConnection, prefix: string): Promise<void> {
  if (nc.isClosed()) return;
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const layout = layoutOf({ prefix });
  for (const name of [layout.eventsStream, layout.requestsStream])
    await jsm.streams.delete(name).catch(() => undefined);
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A nats-server of a test's own, on a free loopback port with a temporary file store. */
export interface OwnBroker {
  readonly url: string;
  start(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Sends the running server a signal: SIGSTOP holds all its traffic, SIGCONT lets it go on. */
  signal(signal: NodeJS.Signals): void;
  /** Stops it and removes its store. */
  dispose(): Promise<void>;
}

/**
 * `config`, when given, is the rest of a nats-server configuration (users and
 * permissions, say) after its address, port and store; `credentials` are
 * what the start-up check connects with.
 */
export async function ownBroker(
  options: { config?: string; credentials?: Pick<ConnectionOptions, 'user' | 'pass'> } = {},
): Promise<OwnBroker> {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), 'evosci-rx-nats-'));
  const url = `127.0.0.1:${port}`;
  const configFile = join(store, 'nats.conf');
  writeFileSync(
    configFile,
    `listen: "${url}"\njetstream { store_dir: "${join(store, 'js')}" }\n${options.config ?? ''}\n`,
  );
  let child: ChildProcess | undefined;
  const broker: OwnBroker = {
    url,
    async start() {
      child = spawn('/usr/sbin/nats-server', ['-c', configFile], { stdio: 'ignore' });
      const until = Date.now() + 10_000;
      for (;;) {
        try {
          const nc = await connect({ servers: url, timeout: 500, reconnect: false, ...options.credentials });
          await jetstreamManager(nc);
          await nc.close();
          return;
        } catch (err) {
          if (Date.now() > until) throw new Error(`nats-server on ${url} did not start: ${(err as Error).message}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    signal(signal) {
      child?.kill(signal);
    },
    async stop(signal = 'SIGTERM') {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill(signal);
      });
    },
    async dispose() {
      await broker.stop('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    },
  };
  return broker;
}
