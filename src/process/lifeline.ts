import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The build copies the script beside this module, so the same path holds in the source tree and the package. */
const LIFELINE_SCRIPT = fileURLToPath(new URL('./lifeline.mjs', import.meta.url));

/** A running lifeline: `release()` once the group has ended or been stopped by the app itself. */
export interface Lifeline {
  release(): void;
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
 * ```ts
 * const lifeline = startLifeline(child.pid, ['SIGTERM', 'SIGKILL'], 3000);
 * child.on('exit', () => lifeline.release());
 * ```
 */
export function startLifeline(pgid: number, signals: readonly NodeJS.Signals[], graceMs: number): Lifeline {
  const sequence = ['SIGINT', ...signals.filter((s) => s !== 'SIGINT')];
  const child = spawn(process.execPath, [LIFELINE_SCRIPT, String(pgid), String(graceMs), sequence.join(',')], {
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true,
  });
  child.on('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  child.unref();
  (child.stdin as { unref?: () => void } | null)?.unref?.();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      child.stdin?.end('release\n');
    },
  };
}
