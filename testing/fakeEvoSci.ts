import { accessSync, chmodSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FakeStep } from './FakeStep.js';

/** The build copies the script beside this module, so the same path holds in the source tree and the package. */
const FAKE_CLI = fileURLToPath(new URL('./fake-evosci.mjs', import.meta.url));

/**
 * `command` and `env` for `run()` that start a fake EvoSci, a real child
 * process replaying `steps`: transcripts, stderr, pauses, crashes, signals.
 *
 * ```ts
 * run({ prompt: 'x', ...fakeEvoSci([{ transcript: 'run.jsonl', delayMs: 5 }, { resumeHint: 't-1' }]) })
 * ```
 */
export function fakeEvoSci(steps: readonly FakeStep[]): { command: string; env: Record<string, string> } {
  try {
    accessSync(FAKE_CLI, constants.X_OK);
  } catch {
    // npm does not keep the executable bit of files outside `bin`.
    chmodSync(FAKE_CLI, 0o755);
  }
  return { command: FAKE_CLI, env: { EVOSCI_FAKE: JSON.stringify({ steps }) } };
}
