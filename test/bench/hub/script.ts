// The fake CLI's script of hub.bench.ts, the same for the floor, the local hubs and the JetStream worker.
import type { FakeStep } from '../../../testing/index.js';

/** Waits for `go` when given (a live run, its readers connected first), then writes the transcript, each event stamped. */
export function benchSteps(transcript: string, gapMs: number, go: string | undefined): FakeStep[] {
  return [...(go ? [{ waitForFile: go }] : []), { transcript, delayMs: gapMs, stamp: true }, { exitAsEvoSci: true }];
}
