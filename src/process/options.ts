import { checkDecodeOptions, type DecodeOptions } from '../events/decode/JsonlDecoder.js';
import type { FlowControl } from '../common/FlowControl.js';
import { cutText } from '../common/cutText.js';
import { atLeast } from '../common/checks.js';

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
  /** Milliseconds between the signals that stop the process (SIGINT, SIGTERM, SIGKILL). Default 3000. */
  readonly killGraceMs?: number;
  /**
   * Milliseconds the process may go on after `done` (EvoSci saves its memory
   * for up to ~120 s, then prints the resume hint and exits) before it is
   * stopped as on unsubscribe. Default 150000. `onExit` reports its exit.
   */
  readonly lingerMs?: number;
  /** Each stderr line, control characters removed. */
  readonly onStderr?: (line: string) => void;
  /** Called once the process has started, with its id (also the id of its process group on POSIX). */
  readonly onSpawn?: (pid: number) => void;
  /** Called once when the process has ended, however it ended. */
  readonly onExit?: (info: ExitInfo) => void;
  /** Characters (UTF-16 units) of stderr kept for errors. Default 65536. */
  readonly stderrTailChars?: number;
  /** @deprecated The old name of `stderrTailChars`: it always counted characters, not bytes. */
  readonly stderrTailBytes?: number;
  /**
   * Stop the process group even if this Node process is killed by SIGKILL, which runs no exit
   * hook: a small watchdog process per run does it (SIGINT, then the stop signals). Default `false`.
   */
  readonly lifeline?: boolean;
  /** While paused, the CLI's stdout is not read: its pipe fills and the CLI waits (see `eachEvent`). */
  readonly flow?: FlowControl;
}

/** How a run's process ended, passed to `RunOptions.onExit` on every ending. */
export interface ExitInfo {
  /** The process id, `undefined` when it never started. */
  readonly pid: number | undefined;
  /** The exit status, `undefined` when killed by a signal or never started. */
  readonly exitCode: number | undefined;
  /** The signal that killed the process, if one did. */
  readonly signal: string | undefined;
  /** Milliseconds from spawn to exit. */
  readonly durationMs: number;
  /** The thread id from the resume hint on stderr: what `resume` takes next time. */
  readonly threadId: string | undefined;
  /** Whether a `done` event was seen. */
  readonly done: boolean;
}

/** Every default of `run()`, in one place. */
const DEFAULTS = {
  killGraceMs: 3000,
  lingerMs: 150_000,
  stderrTailChars: 64 * 1024,
  autoMode: true,
} as const;

/**
 * The signals that stop a run's process, in turn, `killGraceMs` apart.
 * SIGINT first: EvoSci then cleans up (its helper server runs in a session of
 * its own, out of reach of a group kill), prints its resume hint and exits 130.
 */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGKILL'];

/** Linux's limit on one argument (`MAX_ARG_STRLEN`), its terminating NUL included. */
const MAX_ARG_BYTES = 131_072;

/** What a run takes from its options as they are: hooks, the process's environment, decoding flags. */
type PassedKey =
  | 'cwd'
  | 'env'
  | 'signal'
  | 'lifeline'
  | 'flow'
  | 'onStderr'
  | 'onSpawn'
  | 'onExit'
  | 'onDiagnostic'
  | 'strict'
  | 'keepUnknown';
type PassedOptions = { readonly [K in PassedKey]: RunOptions[K] | undefined };

/** A run's options with their defaults, checked once when `run()` is called: all its session reads. */
export interface ResolvedOptions extends PassedOptions {
  readonly maxLineBytes: number;
  readonly command: string;
  readonly argv: readonly string[];
  readonly killGraceMs: number;
  readonly lingerMs: number;
  readonly stderrTailChars: number;
  readonly timeoutMs: number | undefined;
}

function checkDuration(name: string, value: number | undefined): void {
  if (value !== undefined) atLeast('run', name, value, 0);
}

/** The options with their defaults, checked; a mistake is a `TypeError` naming the option, before anything starts. */
export function resolveOptions(options: RunOptions): ResolvedOptions {
  if (typeof options.prompt !== 'string' || options.prompt === '') {
    throw new TypeError('run: prompt must be a non-empty string');
  }
  if (
    options.args !== undefined &&
    !(Array.isArray(options.args) && options.args.every((a) => typeof a === 'string'))
  ) {
    throw new TypeError('run: args must be an array of strings');
  }
  checkDuration('timeoutMs', options.timeoutMs);
  checkDuration('killGraceMs', options.killGraceMs);
  checkDuration('lingerMs', options.lingerMs);
  const stderrTailChars = options.stderrTailChars ?? options.stderrTailBytes ?? DEFAULTS.stderrTailChars;
  const oldName = options.stderrTailChars === undefined && options.stderrTailBytes !== undefined;
  atLeast('run', oldName ? 'stderrTailBytes' : 'stderrTailChars', stderrTailChars, 1);
  const { maxLineBytes } = checkDecodeOptions(options, 'run');
  const { cwd, env, signal, lifeline, flow, onStderr, onSpawn, onExit, onDiagnostic, strict, keepUnknown } = options;
  return {
    ...{ cwd, env, signal, lifeline, flow, onStderr, onSpawn, onExit, onDiagnostic, strict, keepUnknown },
    maxLineBytes,
    command: options.command ?? process.env['EVOSCI_BIN'] ?? 'EvoSci',
    argv: cliArgs(options),
    killGraceMs: options.killGraceMs ?? DEFAULTS.killGraceMs,
    lingerMs: options.lingerMs ?? DEFAULTS.lingerMs,
    stderrTailChars,
    timeoutMs: options.timeoutMs,
  };
}

/**
 * The CLI arguments of a run. Values are attached with `=` so that a prompt
 * or path starting with `-` cannot be read as an option by the CLI's parser.
 */
export function cliArgs(options: RunOptions): string[] {
  const args = [`--prompt=${options.prompt}`, '--output-format=stream-json'];
  if (options.workdir !== undefined) args.push(`--workdir=${options.workdir}`);
  if (!(options.autoMode ?? DEFAULTS.autoMode)) args.push('--no-auto-mode');
  if (options.resume !== undefined) args.push(`--resume=${options.resume}`);
  if (options.args) args.push(...options.args);
  return args;
}

/** The first argument too long for one argv element, as a sentence; `undefined` when all fit. */
export function argvProblem(argv: readonly string[]): string | undefined {
  if (process.platform !== 'linux') return undefined;
  for (const arg of argv) {
    const bytes = Buffer.byteLength(arg) + 1;
    if (bytes <= MAX_ARG_BYTES) continue;
    const prompt = arg.startsWith('--prompt=');
    const name = prompt ? 'the prompt' : `the argument ${JSON.stringify(cutText(arg, 40))}`;
    return (
      `${name} is ${prompt ? Buffer.byteLength(arg) - '--prompt='.length : bytes - 1} bytes of UTF-8, and one argument may hold at most ${MAX_ARG_BYTES - 1} on Linux: ` +
      'shorten it, or write the long text to a file in the workdir and ask the agent to read it'
    );
  }
  return undefined;
}
