// Worker processes (hubWorker.ts) for the hub tests: real `serveRuns`
// workers that run test/runs/scenarios.ts, to be killed as a host is lost.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerProcess } from '../jetstream/workers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** A worker of `prefix` on `broker`, its CLIs recording their starts in `dir`; `ready` once it serves. */
export function startHubWorker(broker: string, prefix: string, dir: string, ackWaitMs: number): WorkerProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/hubWorker.ts', broker, prefix, dir, String(ackWaitMs)],
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
