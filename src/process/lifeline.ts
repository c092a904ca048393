import { spawn } from 'node:child_process';

/**
 * The watchdog's program, run with `node -e`: text in this module rather than
 * a file beside it, so that an app bundled into one file (esbuild, ncc) or
 * packed into an archive still has it.
 *
 * It holds the read end of a pipe from the app. The app writes "release" when
 * the run ended on its own; an end of the pipe without it means the app died
 * (even by SIGKILL, which runs no exit hook), and the group is stopped as the
 * app would have: each signal in turn, `graceMs` apart, while the group is
 * still there. Arguments: a marker, the group id, graceMs, the signals.
 */
const WATCHDOG = `
const [, , group, grace, list] = process.argv;
const pgid = Number(group);
const graceMs = Number(grace);
const signals = (list || 'SIGKILL').split(',');
const alive = () => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let released = false;
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  input += chunk;
  if (input.includes('release')) released = true;
});
process.stdin.on('error', () => {});
process.stdin.on('close', async () => {
  if (released) process.exit(0);
  for (const signal of signals) {
    if (!alive()) break;
    try {
      process.kill(-pgid, signal);
    } catch {
      break;
    }
    for (let waited = 0; waited < graceMs && alive(); waited += 50) await sleep(50);
  }
  process.exit(0);
});
// A group that ended while the app still holds the pipe needs no lifeline.
setInterval(() => {
  if (!alive()) process.exit(0);
}, 1000);
`;

/** The first argument of every watchdog, by which it can be found among processes. */
export const LIFELINE_MARKER = 'evosci-rx-lifeline';

/** A running lifeline: `release()` once the group has ended or been stopped by the app itself. */
export interface Lifeline {
  release(): void;
}

/** The watchdog could not be started: the group it was to guard has been stopped, as nothing would stop it otherwise. */
export class LifelineError extends Error {
  override readonly name = 'LifelineError';
}

/**
 * Starts a watchdog process that stops the process group `pgid` if this Node
 * process dies without releasing it, SIGKILL included: it holds a pipe whose
 * only writer is this process, and the kernel closes that pipe however this
 * process ends. The group is sent SIGINT first (EvoSci's own clean-up path,
 * which also stops its helper server), then `signals`, `graceMs` apart.
 *
 * The watchdog is in a process group of its own (a signal to the CLI's group
 * or to the app's terminal does not reach it) and keeps nothing of this
 * process alive: its handles are unref'd.
 *
 * Throws `LifelineError` when the watchdog cannot be started (a group left
 * unguarded would outlive a crash without a word), after killing the group.
 * A watchdog that fails once started is reported as a process warning.
 *
 * ```ts
 * const lifeline = startLifeline(child.pid, ['SIGTERM', 'SIGKILL'], 3000);
 * child.on('exit', () => lifeline.release());
 * ```
 */
export function startLifeline(pgid: number, signals: readonly NodeJS.Signals[], graceMs: number): Lifeline {
  const sequence = ['SIGINT', ...signals.filter((s) => s !== 'SIGINT')];
  let child;
  try {
    child = spawn(
      process.execPath,
      ['-e', WATCHDOG, LIFELINE_MARKER, String(pgid), String(graceMs), sequence.join(',')],
      {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
        // A node that is an app's own executable (Electron) runs the program as Node only when asked.
        env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      },
    );
  } catch (err) {
    throw unguarded(pgid, (err as Error).message);
  }
  child.on('error', () => undefined);
  // A missing or unusable executable leaves no process id; its error event follows.
  if (child.pid === undefined) throw unguarded(pgid, `${process.execPath} did not start`);
  let released = false;
  child.on('exit', (code, signal) => {
    if (!released && code !== 0)
      process.emitWarning(
        `the lifeline of process group ${pgid} ended (${signal ?? `exit code ${code}`}): a crash of this process would leave the group running`,
      );
  });
  child.stdin?.on('error', () => undefined);
  child.unref();
  (child.stdin as { unref?: () => void } | null)?.unref?.();
  return {
    release() {
      if (released) return;
      released = true;
      child.stdin?.end('release\n');
    },
  };
}

function unguarded(pgid: number, why: string): LifelineError {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Already gone.
  }
  return new LifelineError(`could not start the lifeline watchdog of process group ${pgid}: ${why}`);
}
