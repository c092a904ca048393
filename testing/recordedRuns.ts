import { fileURLToPath } from 'node:url';

/** The build copies `testing/runs` beside this module, so the same paths hold in the source tree and the package. */
const shipped = (file: string): string => fileURLToPath(new URL(`./runs/${file}`, import.meta.url));

/**
 * Recorded runs, for tests: absolute paths of JSONL transcripts as
 * EvoScientist 0.2.x writes them (Python's JSON, one event a line), made by
 * this library's model of the producer and checked against its rules. Replay
 * one through the fake CLI with `fakeRun`, or read it with `fromJsonlFile`.
 *
 * ```ts
 * const events = await lastValueFrom(run(fakeRun(recordedRuns.research)).pipe(toArray()));
 * ```
 */
export const recordedRuns = {
  /**
   * A research run that completes: thinking, streamed text, main-agent tools
   * (one fails), a `task` delegation and two research-agents running in
   * parallel with their own tools, panel dispatches from a `code_interpreter`
   * call, usage, `done`. 203 events; EvoSci exits 0.
   */
  research: shipped('research.jsonl'),
  /**
   * A run that stops to ask (`--no-auto-mode`): an `ask_user` call, its
   * `ask_user` event with two questions, `done`. `summarize()` gives
   * `needs-input`; EvoSci exits 0.
   */
  needsInput: shipped('needs-input.jsonl'),
  /**
   * A run that stops at an approval (`--no-auto-mode`): an `execute` call,
   * the `interrupt` asking to approve it, `done`. `needs-input`; exits 0.
   */
  needsApproval: shipped('needs-approval.jsonl'),
  /**
   * `needsApproval`'s thread resumed with a new prompt: it opens with the
   * result of the call made before the resume, then completes.
   */
  resumed: shipped('resumed.jsonl'),
  /**
   * A run that fails: an `error` event (the model API overloaded) while a
   * sub-agent works, its `subagent_end`, and no `done`. `failed`; EvoSci exits 1.
   */
  failed: shipped('failed.jsonl'),
} as const;

/** The name of a recorded run. */
export type RecordedRun = keyof typeof recordedRuns;
