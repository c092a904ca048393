// Worker processes for the tests: real child processes running worker.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isAlive } from '../support/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Activity lines printed so far. */
  readonly activity: Record<string, unknown>[];
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  stderr(): string;
}

export function startWorker(
  broker: string,
  prefix: string,
  args: { concurrency?: number; ackWaitMs?: number; maxAttempts?: number } = {},
): WorkerProcess {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/jetstream/worker.ts',
      broker,
      prefix,
      String(args.concurrency ?? 2),
      String(args.ackWaitMs ?? 2000),
      String(args.maxAttempts ?? 3),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const activity: Record<string, unknown>[] = [];
  let stderr = '';
  let buffered = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry['type'] === 'ready') onReady();
      else activity.push(entry);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, pid: child.pid!, activity, ready, exited, stderr: () => stderr };
}

/** Stops workers still running, for afterEach. */
export async function stopWorkers(workers: readonly WorkerProcess[]): Promise<void> {
  await Promise.all(
    workers.map(async (w) => {
      if (w.child.exitCode === null && w.child.signalCode === null) {
        w.child.kill('SIGKILL');
        await w.exited;
      }
    }),
  );
}

/** Live processes whose command line contains `tag` (the fake CLI's prompt carries it). */
export function processesTagged(tag: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmdline.includes(tag) && Number(entry) !== process.pid && isAlive(Number(entry))) pids.push(Number(entry));
  }
  return pids;
}
