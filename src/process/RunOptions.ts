import type { DecodeOptions } from '../decode/DecodeOptions.js';
import type { ExitInfo } from './ExitInfo.js';

/** Options of `run()`. Only `prompt` is required. */
export interface RunOptions extends DecodeOptions {
  /** The task, passed as one argument exactly as given: no shell ever sees it. */
  readonly prompt: string;
  /** `--workdir DIR`: the directory the agent works in. */
  readonly workdir?: string;
  /** The CLI to start. Default: `EVOSCI_BIN` from the environment, else `EvoSci` on the PATH. */
  readonly command?: string;
  /** Extra CLI arguments, after the ones this library writes. */
  readonly args?: readonly string[];
  /** `false` passes `--no-auto-mode`: an `interrupt`/`ask_user` then ends the run. Default `true`. */
  readonly autoMode?: boolean;
  /** `--resume ID`: continue a thread (see `ExitInfo.threadId`). */
  readonly resume?: string;
  /** Variables added to the parent environment. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Working directory of the process (not the agent's `workdir`). */
  readonly cwd?: string;
  /** Stop the run and error with `TimeoutError` after this many milliseconds. */
  readonly timeoutMs?: number;
  /** Aborting stops the run; it errors with `CancelledError`. */
  readonly signal?: AbortSignal;
  /** Milliseconds between SIGTERM and SIGKILL when stopping the process. Default 3000. */
  readonly killGraceMs?: number;
  /** Each stderr line, ANSI codes stripped. */
  readonly onStderr?: (line: string) => void;
  /** Called once the process has started, with its id (also the id of its process group on POSIX). */
  readonly onSpawn?: (pid: number) => void;
  /** Called once when the process has ended, however it ended. */
  readonly onExit?: (info: ExitInfo) => void;
  /** Characters of stderr kept for errors. Default 64 KiB. */
  readonly stderrTailBytes?: number;
}
