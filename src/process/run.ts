import { config, Observable, type Subscriber } from 'rxjs';
import { checkDecodeOptions, deliver, JsonlDecoder, type Decoded, type DecodeOptions } from '../decode/JsonlDecoder.js';
import type { DecodeIssue } from '../decode/decodeLine.js';
import {
  CancelledError,
  DecodeError,
  ExitError,
  SpawnError,
  TimeoutError,
  TruncatedStreamError,
  type EvoSciErrorDetails,
} from '../errors.js';
import type { EvoEvent, UnknownEvent } from '../events.js';
import { CliProcess, type CliResult } from './CliProcess.js';
import { after, type Timer } from './timers.js';
import { StderrLog } from './StderrLog.js';
import { stripControls } from '../controls.js';

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
  /** Characters of stderr kept for errors. Default 64 KiB. */
  readonly stderrTailBytes?: number;
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
  stderrTailBytes: 64 * 1024,
  autoMode: true,
} as const;

/**
 * The signals that stop a run's process, in turn, `killGraceMs` apart.
 * SIGINT first: EvoSci then cleans up (its helper server runs in a session of
 * its own, out of reach of a group kill), prints its resume hint and exits 130.
 */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGKILL'];

/** Linux's limit on one argument (`MAX_ARG_STRLEN`), its terminating NUL included. */
const MAX_ARG_BYTES = 131_072;

interface ResolvedOptions {
  readonly command: string;
  readonly argv: readonly string[];
  readonly killGraceMs: number;
  readonly lingerMs: number;
  readonly stderrTailBytes: number;
  readonly timeoutMs: number | undefined;
}

/** The runs waiting on each signal: one listener per signal, however many runs share it (no MaxListeners warning). */
const abortWaiters = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `onAbort` when `signal` aborts; returns the function that stops waiting. */
function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let waiters = abortWaiters.get(signal);
  if (!waiters) {
    const all = new Set<() => void>();
    waiters = all;
    abortWaiters.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        for (const waiter of [...all]) waiter();
      },
      { once: true },
    );
  }
  const own = () => onAbort();
  waiters.add(own);
  return () => waiters.delete(own);
}

function checkDuration(name: string, value: number | undefined): void {
  if (value !== undefined && !(typeof value === 'number' && value >= 0)) {
    throw new TypeError(`run: ${name} must be a number of milliseconds ≥ 0, got ${String(value)}`);
  }
}

/** The options with their defaults, checked; a mistake is a `TypeError` naming the option, before anything starts. */
function resolveOptions(options: RunOptions): ResolvedOptions {
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
  const stderrTailBytes = options.stderrTailBytes ?? DEFAULTS.stderrTailBytes;
  if (!(stderrTailBytes >= 1)) throw new TypeError(`run: stderrTailBytes must be ≥ 1, got ${String(stderrTailBytes)}`);
  checkDecodeOptions(options);
  return {
    command: options.command ?? process.env['EVOSCI_BIN'] ?? 'EvoSci',
    argv: cliArgs(options),
    killGraceMs: options.killGraceMs ?? DEFAULTS.killGraceMs,
    lingerMs: options.lingerMs ?? DEFAULTS.lingerMs,
    stderrTailBytes,
    timeoutMs: options.timeoutMs,
  };
}

/**
 * The CLI arguments of a run. Values are attached with `=` so that a prompt
 * or path starting with `-` cannot be read as an option by the CLI's parser.
 */
/** The first argument too long for one argv element, as a sentence; `undefined` when all fit. */
function argvProblem(argv: readonly string[]): string | undefined {
  if (process.platform !== 'linux') return undefined;
  for (const arg of argv) {
    const bytes = Buffer.byteLength(arg) + 1;
    if (bytes <= MAX_ARG_BYTES) continue;
    const prompt = arg.startsWith('--prompt=');
    const name = prompt ? 'the prompt' : `the argument ${JSON.stringify(arg.slice(0, 40))}…`;
    return (
      `${name} is ${prompt ? Buffer.byteLength(arg) - '--prompt='.length : bytes - 1} bytes of UTF-8, and one argument may hold at most ${MAX_ARG_BYTES - 1} on Linux: ` +
      'shorten it, or write the long text to a file in the workdir and ask the agent to read it'
    );
  }
  return undefined;
}

function cliArgs(options: RunOptions): string[] {
  const args = [`--prompt=${options.prompt}`, '--output-format=stream-json'];
  if (options.workdir !== undefined) args.push(`--workdir=${options.workdir}`);
  if (!(options.autoMode ?? DEFAULTS.autoMode)) args.push('--no-auto-mode');
  if (options.resume !== undefined) args.push(`--resume=${options.resume}`);
  if (options.args) args.push(...options.args);
  return args;
}

/**
 * One EvoSci run as a cold Observable of its events.
 *
 * Each subscription starts one process (`command --prompt=… --output-format=stream-json …`,
 * no shell) and emits each event as soon as its line is written. It completes
 * as soon as `done` is read, a run that stopped to ask (`needs-input`) too; the
 * process may then finish its clean-up for up to `lingerMs`, and `onExit`
 * reports how it exited. Without `done` it errors, after every whole event,
 * with `SpawnError`, `ExitError`, `TruncatedStreamError`, `TimeoutError`,
 * `CancelledError` or (with `strict`) `DecodeError`. Options are checked
 * when `run` is called: a mistake throws a `TypeError`.
 *
 * Unsubscribing before `done`, `timeoutMs` and `signal` stop the process and
 * every process it started (its process group): SIGINT, so that EvoSci cleans
 * up and prints its resume hint, then SIGTERM and SIGKILL, `killGraceMs`
 * apart. The error arrives once the process has exited, with the thread id it
 * printed. Processes left in the group when the CLI exits are killed, and so
 * are all runs' groups if Node itself exits.
 *
 * ```ts
 * run({ prompt: 'Summarize attention into notes.md', workdir: '/tmp/task' })
 *   .pipe(ofType('text'))
 *   .subscribe((e) => process.stdout.write(e.content));
 * ```
 */
export function run(options: RunOptions & { keepUnknown: true }): Observable<EvoEvent | UnknownEvent>;
export function run(options: RunOptions): Observable<EvoEvent>;
export function run(options: RunOptions): Observable<EvoEvent | UnknownEvent> {
  const resolved = resolveOptions(options);
  return new Observable<EvoEvent | UnknownEvent>((subscriber) => subscribeRun(subscriber, options, resolved));
}

/** One subscription: one process, from spawn to the end of the Observable. */
function subscribeRun(
  subscriber: Subscriber<EvoEvent | UnknownEvent>,
  options: RunOptions,
  { command, argv, killGraceMs, lingerMs, stderrTailBytes, timeoutMs }: ResolvedOptions,
): (() => void) | undefined {
  const abortSignal = options.signal;
  if (abortSignal?.aborted) {
    subscriber.error(new CancelledError('run aborted before it started', { cause: abortSignal.reason }));
    return undefined;
  }
  const tooLong = argvProblem(argv);
  if (tooLong !== undefined) {
    subscriber.error(new SpawnError(`could not start ${JSON.stringify(command)}: ${tooLong}`));
    return undefined;
  }
  const decoder = new JsonlDecoder(options);
  const stderr = new StderrLog(options.onStderr, stderrTailBytes);
  const details = (more: EvoSciErrorDetails = {}): EvoSciErrorDetails => ({
    stderrTail: stderr.tail,
    threadId: stderr.threadId,
    ...more,
  });
  let sawDone = false;
  let lastError: string | undefined;
  /**
   * Why this side ended the run (an `EvoSciError`, or what an app callback
   * threw); built once the process is gone, to say how it went and carry the
   * thread id it printed while stopping.
   */
  let failure: ((ending: CliResult) => unknown) | undefined;
  let timeoutTimer: Timer | undefined;
  let lingerTimer: Timer | undefined;

  const fail = (reason: (ending: CliResult) => unknown) => {
    if (sawDone) return;
    failure ??= reason;
    cli?.stop();
  };
  /** `… (stopped with SIGINT; exited with code 130)`: which signals it took, and how it ended. */
  const stopped = ({ exitCode, signal }: CliResult): string => {
    const sent = cli?.signalsSent ?? [];
    const ended = signal !== undefined ? `killed by ${signal}` : `exited with code ${exitCode}`;
    return sent.length === 0 ? ended : `stopped with ${sent.join(', then ')}; ${ended}`;
  };
  const ending = (result: CliResult): EvoSciErrorDetails =>
    details({ exitCode: result.exitCode, signal: result.signal });
  const sink = {
    get closed() {
      return subscriber.closed;
    },
    next(event: EvoEvent | UnknownEvent) {
      if (event.type === 'error') lastError = String(event['message']);
      subscriber.next(event);
      if (event.type !== 'done' || sawDone) return;
      sawDone = true;
      // The run is over; the process may still save its memory: it has until lingerMs.
      lingerTimer = after(lingerMs, () => cli?.stop());
      timeoutTimer?.clear();
      subscriber.complete();
    },
  };
  /** Lines that were not events, counted so that an error can say so even without an `onDiagnostic`. */
  let badLines = 0;
  let firstBadLine: DecodeIssue | undefined;
  const decodeOptions = {
    strict: options.strict,
    onDiagnostic: (issue: DecodeIssue) => {
      badLines++;
      firstBadLine ??= issue;
      options.onDiagnostic?.(issue);
    },
  };
  /** `; 12 lines were not events, the first (line 1): "Loading…"`, or nothing. */
  const badLinesNote = () =>
    firstBadLine === undefined
      ? ''
      : `; ${badLines} ${badLines === 1 ? 'line was' : 'lines were'} not events, the first (line ${firstBadLine.line}): ${JSON.stringify(stripControls(firstBadLine.raw).slice(0, 120))}`;
  const emit = (decoded: readonly Decoded[]): DecodeIssue | undefined => deliver(decoded, sink, decodeOptions);
  // An app callback (onDiagnostic, onStderr) that throws ends the run with its error, not the app.
  const guarded = (read: (chunk: Uint8Array) => void) => (chunk: Uint8Array) => {
    try {
      read(chunk);
    } catch (err) {
      fail(() => err);
    }
  };
  const onAbort = () =>
    fail(
      (result) =>
        new CancelledError(`run aborted (${stopped(result)})`, { ...ending(result), cause: abortSignal?.reason }),
    );

  const settled = (result: CliResult) => {
    timeoutTimer?.clear();
    lingerTimer?.clear();
    stopWaiting?.();
    // Flushing calls the app's callbacks; one that throws must not keep onExit from being called.
    let cutLine: DecodeIssue | undefined;
    for (const flush of [() => (cutLine = emit(decoder.end())), () => stderr.end()]) {
      try {
        flush();
      } catch (err) {
        failure ??= () => err;
      }
    }
    try {
      options.onExit?.({
        pid: cli?.pid,
        exitCode: result.exitCode,
        signal: result.signal,
        durationMs: result.durationMs,
        threadId: stderr.threadId,
        done: sawDone,
      });
      if (!subscriber.closed) end(result, cutLine);
    } catch (err) {
      // onExit threw: the run ends with it, or, if it already completed at `done`, the error is reported as RxJS reports errors it cannot deliver.
      if (!subscriber.closed) subscriber.error(err);
      else if (config.onUnhandledError) config.onUnhandledError(err);
      else
        setTimeout(() => {
          throw err;
        });
    }
  };

  /** The Observable's last word, from how the process ended. */
  const end = (result: CliResult, cutLine: DecodeIssue | undefined) => {
    const { exitCode, signal, spawnFailure } = result;
    if (failure) return subscriber.error(failure(result));
    if (spawnFailure !== undefined) {
      const cause = spawnFailure as { message?: string; shortMessage?: string; code?: string };
      const where = options.cwd ? ` in ${options.cwd}` : '';
      // A missing CLI is the first thing a new user meets: say where the command comes from.
      const hint =
        cause.code === 'ENOENT' && !(options.cwd && cause.message?.includes(options.cwd))
          ? `; install EvoScientist 0.2.1 or later (the first with stream-json), or point run() at it with the command option or EVOSCI_BIN`
          : '';
      return subscriber.error(
        new SpawnError(
          `could not start ${JSON.stringify(command)}${where}: ${cause.message ?? cause.shortMessage ?? 'unknown reason'}${hint}`,
          details({ cause: spawnFailure }),
        ),
      );
    }
    // A line cut short by a crash is a symptom of it: the exit is what is reported.
    if (cutLine && exitCode !== 0) decodeOptions.onDiagnostic(cutLine);
    if (signal !== undefined) {
      return subscriber.error(new ExitError(`${command} was killed by ${signal}`, details({ signal })));
    }
    if (exitCode !== 0) {
      const why = lastError === undefined ? '' : `: ${lastError}`;
      return subscriber.error(
        new ExitError(`${command} exited with code ${exitCode}${why}${badLinesNote()}`, details({ exitCode })),
      );
    }
    if (cutLine) return subscriber.error(new DecodeError(cutLine, details({ exitCode })));
    if (!sawDone) {
      return subscriber.error(
        new TruncatedStreamError(`${command} exited 0 without a done event${badLinesNote()}`, details({ exitCode })),
      );
    }
    subscriber.complete();
  };

  let cli: CliProcess | undefined;
  try {
    cli = new CliProcess(command, argv, {
      cwd: options.cwd,
      env: options.env,
      stopSignals: STOP_SIGNALS,
      graceMs: killGraceMs,
      onStdout: guarded((chunk) => {
        // Once the run is ending, its output is no longer read; its stderr still is, for the resume hint.
        if (subscriber.closed || failure) return;
        const fatal = emit(decoder.write(chunk));
        if (fatal) fail((result) => new DecodeError(fatal, ending(result)));
      }),
      onStderr: guarded((chunk) => stderr.write(chunk)),
      onSettled: settled,
    });
  } catch (err) {
    // execa refuses some input before spawning, such as a NUL byte in an argument.
    subscriber.error(
      new SpawnError(`could not start ${JSON.stringify(command)}: ${(err as Error).message}`, { cause: err }),
    );
    return undefined;
  }

  if (cli.pid !== undefined) {
    try {
      options.onSpawn?.(cli.pid);
    } catch (err) {
      fail(() => err);
    }
  }
  const stopWaiting = abortSignal && whenAborted(abortSignal, onAbort);
  if (timeoutMs !== undefined) {
    timeoutTimer = after(timeoutMs, () =>
      fail((result) => new TimeoutError(`run timed out after ${timeoutMs} ms (${stopped(result)})`, ending(result))),
    );
  }
  return () => {
    // After `done` the process is left its clean-up, bounded by lingerMs.
    if (!sawDone) cli?.stop();
    timeoutTimer?.clear();
    stopWaiting?.();
  };
}
