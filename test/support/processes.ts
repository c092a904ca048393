import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether `pid` is a running process; a zombie waiting to be reaped counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * How long a test waits for a sign before it gives up: long, since the sign
 * is what the test waits for and a loaded machine can be slow to give it.
 */
export const PATIENCE_MS = 30_000;

/** Resolves `true` once `pid` is gone, `false` if it is still there after `withinMs`. */
export function gone(pid: number, withinMs = PATIENCE_MS): Promise<boolean> {
  return eventually(() => !isAlive(pid), withinMs);
}

/**
 * Resolves `true` once `pid` has been reaped by this process: Node has then
 * seen its exit (its `exit` event fires as it reaps), unlike a zombie that
 * `gone` already counts as gone.
 */
export function reaped(pid: number, withinMs = PATIENCE_MS): Promise<boolean> {
  return eventually(() => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  }, withinMs);
}

/** Waits for a file the fake CLI writes, and reads it. */
export async function readWhenWritten(path: string, withinMs = PATIENCE_MS): Promise<string> {
  if (!(await eventually(() => existsSync(path) && readFileSync(path, 'utf8') !== '', withinMs))) {
    throw new Error(`${path} was not written`);
  }
  return readFileSync(path, 'utf8');
}

/** A fresh temporary directory, and a path in it. */
export function scratch(): (name: string) => string {
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-'));
  return (name) => join(dir, name);
}

/** The active handles of this process that a run could leak. */
export function runHandles(): string[] {
  return process
    .getActiveResourcesInfo()
    .filter((kind) => /ChildProcess|Pipe|Timeout|Signal|TTYWrap|ProcessWrap/.test(kind));
}

/** Resolves once `check()` holds, or with its last answer after `withinMs`: for clean-up that finishes asynchronously. */
export async function eventually(check: () => boolean, withinMs = PATIENCE_MS): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  return check();
}
