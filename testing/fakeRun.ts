import { resolve } from 'node:path';
import { fakeEvoSci, type FakeStep } from './fakeEvoSci.js';

/** How `fakeRun` replays a transcript. */
export interface FakeRunOptions {
  /** The prompt of the returned options. Default: `'replay a recorded run'`; a fake answers any prompt the same. */
  readonly prompt?: string;
  /** The pause before each event, in ms. Default 0: as fast as the pipe takes them. */
  readonly delayMs?: number;
  /** The pause before each event of these types, instead of `delayMs` (`{ text: 20 }` streams text at a reading pace). */
  readonly delayByType?: Readonly<Record<string, number>>;
  /** Lines written to stderr before the transcript, as EvoSci's `Loading agent...`. Default none. */
  readonly stderr?: readonly string[];
  /**
   * The thread id of the resume hint written to stderr at the end, as EvoSci
   * does (`onExit` reports it as `threadId`). Default `'4e1f9a2b'`; `false` for none.
   */
  readonly resumeHint?: string | false;
  /** The exit status. Default: EvoSci's for what the transcript shows, 0 when it ends with `done`, else 1. */
  readonly exitCode?: number;
  /** The transcript a run with `resume` replays instead (`recordedRuns.resumed` follows `needsApproval`). */
  readonly onResume?: string;
}

/** Options for `run()` that replay a recorded transcript through the fake CLI. */
export interface FakeRun {
  /** The prompt (`run()` requires one; the fake does not read it). */
  readonly prompt: string;
  /** The fake CLI to start instead of EvoSci. */
  readonly command: string;
  /** The environment that gives the fake its script. */
  readonly env: Record<string, string>;
}

/** The thread id of the default resume hint: EvoSci prints a thread id's first 8 hex digits. */
const DEFAULT_THREAD = '4e1f9a2b';

/**
 * `RunOptions` (prompt, command, env) that replay `transcript` (a JSONL path,
 * such as `recordedRuns.research`) through the fake CLI, a real child process
 * that ends as EvoSci does: the resume hint on stderr, exit 0 after `done`,
 * 1 without. For a test (`run(fakeRun(recordedRuns.failed))`,
 * `withFakeRuns(fakeRun(…), …)`), or for an app pointed at the fake
 * (`EVOSCI_BIN=<command>` and `env` in its environment, then its own
 * `run()` calls replay it).
 *
 * ```ts
 * const summary = await lastValueFrom(run(fakeRun(recordedRuns.needsInput)).pipe(summarize()));
 * summary.outcome; // 'needs-input'
 * ```
 */
export function fakeRun(transcript: string, options: FakeRunOptions = {}): FakeRun {
  const { prompt = 'replay a recorded run', onResume } = options;
  const played = (file: string): FakeStep[] => replay(file, options);
  const steps: FakeStep[] =
    onResume === undefined ? played(transcript) : [{ onResume: played(onResume) }, ...played(transcript)];
  return { prompt, ...fakeEvoSci(steps) };
}

/** The steps of one replay: stderr, the transcript (by absolute path: a run may have another cwd), the hint, the exit. */
function replay(transcript: string, options: FakeRunOptions): FakeStep[] {
  const { delayMs = 0, delayByType = {}, stderr = [], resumeHint = DEFAULT_THREAD, exitCode } = options;
  return [
    ...stderr.map((line): FakeStep => ({ stderr: line })),
    { transcript: resolve(transcript), delayMs, delayByType },
    ...(resumeHint === false ? [] : [{ resumeHint }]),
    exitCode === undefined ? { exitAsEvoSci: true } : { exit: exitCode },
  ];
}
