// The tests' nats-server processes, and where the shared broker is. No vitest
// here: the suite's global setup (vitest's main process), test files, and the
// worker processes and benchmarks they spawn all import this.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { connect, type ConnectionOptions } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

/** Where users start their broker (the README's examples): what a benchmark or worker run by hand uses. */
const USERS_BROKER = '127.0.0.1:4222';

/**
 * The broker the JetStream tests share, as `host:port`: `EVOSCI_RX_NATS`. Under
 * vitest the suite's setup (suiteBroker.ts) sets it in every test process, and
 * the processes the tests spawn inherit it. Empty counts as unset, so that
 * `EVOSCI_RX_NATS= npx vitest` gets a broker of the suite's own.
 */
export function natsUrl(): string {
  return process.env['EVOSCI_RX_NATS'] || USERS_BROKER;
}

/** The command that installs nats-server where the suite runs (Debian, as on CI). */
export const INSTALL_NATS_SERVER = 'apt-get install -y nats-server';

/** The nats-server binary: on the PATH, or where Debian puts it (/usr/sbin is not on every user's PATH). */
export function natsServerBinary(): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  return dirs
    .filter((dir) => dir !== '')
    .map((dir) => join(dir, 'nats-server'))
    .find(isExecutableFile);
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** What the suite says, in one line, when nats-server is not installed. */
export function missingNatsServer(): string {
  return `the tests need the nats-server binary (on the PATH or in /usr/sbin); install it with: ${INSTALL_NATS_SERVER}`;
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

/**
 * Resolves once a server with JetStream answers at `url`, trying every 100 ms:
 * a server just spawned takes a moment to listen, and longer on a loaded machine.
 */
export async function jetStreamAnswers(
  url: string,
  options: { withinMs: number; credentials?: Pick<ConnectionOptions, 'user' | 'pass'> },
): Promise<void> {
  const until = Date.now() + options.withinMs;
  for (;;) {
    try {
      const nc = await connect({ servers: url, timeout: 500, reconnect: false, ...options.credentials });
      try {
        await jetstreamManager(nc);
      } finally {
        await nc.close();
      }
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '(no log)';
  }
}

/** A nats-server of a test's own (or of the suite's), on a free loopback port with a temporary file store. */
export interface OwnBroker {
  readonly url: string;
  start(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Sends the running server a signal: SIGSTOP holds all its traffic, SIGCONT lets it go on. */
  signal(signal: NodeJS.Signals): void;
  /** Stops it and removes its store. */
  dispose(): Promise<void>;
  /** Kills it and removes its store at once: for a process `exit` handler, where nothing asynchronous runs. */
  disposeNow(): void;
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
  const logFile = join(store, 'nats.log');
  writeFileSync(
    configFile,
    `listen: "${url}"\njetstream { store_dir: "${join(store, 'js')}" }\n${options.config ?? ''}\n`,
  );
  let child: ChildProcess | undefined;
  const broker: OwnBroker = {
    url,
    async start() {
      const binary = natsServerBinary();
      if (binary === undefined) throw new Error(missingNatsServer());
      // Its log (stderr) goes to a file, not a pipe: a test that holds its event loop must not block the server's writes.
      const log = openSync(logFile, 'a');
      const started = spawn(binary, ['-c', configFile], { stdio: ['ignore', 'ignore', log] });
      closeSync(log);
      child = started;
      // Fails at once if it exits before it answers ("address already in use", say), with the end of its log.
      const exited = new Promise<never>((_, reject) =>
        started.once('exit', (code, signal) =>
          reject(new Error(`exited (${signal ?? `code ${String(code)}`}) before it answered: ${logTail(logFile)}`)),
        ),
      );
      exited.catch(() => undefined);
      try {
        await Promise.race([jetStreamAnswers(url, { withinMs: 10_000, credentials: options.credentials }), exited]);
      } catch (err) {
        throw new Error(`nats-server on ${url} did not start: ${(err as Error).message}`);
      }
    },
    signal(signal) {
      child?.kill(signal);
    },
    async stop(signal = 'SIGTERM') {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once('exit', () => resolve());
        running.kill(signal);
      });
    },
    async dispose() {
      await broker.stop('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    },
    disposeNow() {
      child?.kill('SIGKILL');
      child = undefined;
      rmSync(store, { recursive: true, force: true });
    },
  };
  return broker;
}
