// The fake CLI's script of hub.bench.ts, the same for the floor, the local hubs and the JetStream worker.
import type { FakeStep } from '../../../testing/index.js';

/** Where a paced run stops mid-way, its readers all connected, until the bench has weighed the server: a file and a line. */
export interface Hold {
  readonly file: string;
  readonly after: number;
}

/**
 * Waits for `go` when given (a live run, its readers connected first), then writes the transcript, each event
 * stamped; with `hold`, stops after `hold.after` lines until `hold.file` exists.
 */
export function benchSteps(transcript: string, gapMs: number, go: string | undefined, hold?: Hold): FakeStep[] {
  const lines: FakeStep[] = hold
    ? [
        { transcript, delayMs: gapMs, stamp: true, count: hold.after },
        { waitForFile: hold.file },
        { transcript, delayMs: gapMs, stamp: true, from: hold.after },
      ]
    : [{ transcript, delayMs: gapMs, stamp: true }];
  return [...(go ? [{ waitForFile: go }] : []), ...lines, { exitAsEvoSci: true }];
}

/** The hold a run's metadata names (`hold`, `holdAfter`), if any. */
export function holdOf(metadata: Readonly<Record<string, string>> | undefined): Hold | undefined {
  const file = metadata?.['hold'];
  return file ? { file, after: Number(metadata['holdAfter']) } : undefined;
}
