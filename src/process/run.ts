import { Observable, type Subscriber } from 'rxjs';
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
import { StderrLog } from './StderrLog.js';

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
  /** Milliseconds between the signals that stop the process. Default 3000. */
  readonly killGraceMs?: number;
  /** Each stderr line, control characters removed. */
  readonly onStderr?: (line: string) => void;
  /** Called once the process has started, with its id (also the id of its process group on POSIX). */
  readonly onSpawn?: (pid: number) => void;
  /** Called once when the process has ended, however it ended. */
  readonly onExit?: (info: ExitInfo) => void;
  /** Characters of stderr kept for errors. Default 64 KiB. */
  readonly stderrTailBytes?: number;
  /**
   * Stop the process group even if this Node process is killed by SIGKILL, which runs no exit
   * hook: a small watchdog process per run does it (SIGINT, then the stop signals). Default `false`.
   */
  readonly lifeline?: boolean;
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
  stderrTailBytes: 64 * 1024,
  autoMode: true,
} as const;

/** The signals that stop a run's process, in turn, `killGraceMs` apart. */
const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGKILL'];

interface ResolvedOptions {
  readonly command: string;
  readonly argv: readonly string[];
  readonly killGraceMs: number;
  readonly stderrTailBytes: number;
  readonly timeoutMs: number | undefined;
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
  if (options.args !== undefined && !(Array.isArray(options.args) && options.args.every((a) => typeof a === 'string'))) {
    throw new TypeError('run: args must be an array of strings');
  }
  checkDuration('timeoutMs', options.timeoutMs);
  checkDuration('killGraceMs', options.killGraceMs);
  const stderrTailBytes = options.stderrTailBytes ?? DEFAULTS.stderrTailBytes;
  if (!(stderrTailBytes >= 1)) throw new TypeError(`run: stderrTailBytes must be ≥ 1, got ${String(stderrTailBytes)}`);
  checkDecodeOptions(options);
  return {
    command: options.command ?? process.env['EVOSCI_BIN'] ?? 'EvoSci',
    argv: cliArgs(options),
    killGraceMs: options.killGraceMs ?? DEFAULTS.killGraceMs,
    stderrTailBytes,
    timeoutMs: options.timeoutMs,
  };
}

/**
 * The CLI arguments of a run. Values are attached with `=` so that a prompt
 * or path starting with `-` cannot be read as an option by the CLI's parser.
 */
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
 * after a `done` event and exit status 0; otherwise it errors, after every
 * whole event, with `SpawnError`, `ExitError`, `TruncatedStreamError`,
 * `TimeoutError`, `CancelledError` or (with `strict`) `DecodeError`. Options
 * are checked when `run` is called: a mistake throws a `TypeError`.
 *
 * Unsubscribing, `timeoutMs` and `signal` stop the process and every process
 * it started (its process group): SIGTERM, then SIGKILL after `killGraceMs`.
 * Processes left in the group when the CLI exits are killed, and so are all
 * runs' groups if Node itself exits.
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
  { command, argv, killGraceMs, stderrTailBytes, timeoutMs }: ResolvedOptions,
): (() => void) | undefined {
  const abortSignal = options.signal;
  if (abortSignal?.aborted) {
    subscriber.error(new CancelledError('run aborted before it started', { cause: abortSignal.reason }));
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
  /** Why this side ended the run (an `EvoSciError`, or what an app callback threw); reported once the process is gone. */
  let failure: (() => unknown) | undefined;
  let timeoutTimer: ReturnType<typeof setTimeout> | undefined;

  const fail = (reason: () => unknown) => {
    failure ??= reason;
    cli?.stop();
  };
  const sink = {
    get closed() {
      return subscriber.closed;
    },
    next(event: EvoEvent | UnknownEvent) {
      if (event.type === 'done') sawDone = true;
      else if (event.type === 'error') lastError = String(event['message']);
      subscriber.next(event);
    },
  };
  const emit = (decoded: readonly Decoded[]): DecodeIssue | undefined => deliver(decoded, sink, options);
  // An app callback (onDiagnostic, onStderr) that throws ends the run with its error, not the app.
  const guarded = (read: (chunk: Uint8Array) => void) => (chunk: Uint8Array) => {
    if (failure) return;
    try {
      read(chunk);
    } catch (err) {
      fail(() => err);
    }
  };
  const onAbort = () => fail(() => new CancelledError('run aborted', details({ cause: abortSignal?.reason })));

  const settled = (result: CliResult) => {
    clearTimeout(timeoutTimer);
    abortSignal?.removeEventListener('abort', onAbort);
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
      // onExit threw: the run ends with it.
      subscriber.error(err);
    }
  };

  /** The Observable's last word, from how the process ended. */
  const end = ({ exitCode, signal, spawnFailure }: CliResult, cutLine: DecodeIssue | undefined) => {
    if (failure) return subscriber.error(failure());
    if (spawnFailure !== undefined) {
      const cause = spawnFailure as { message?: string; shortMessage?: string };
      const where = options.cwd ? ` in ${options.cwd}` : '';
      return subscriber.error(
        new SpawnError(
          `could not start ${JSON.stringify(command)}${where}: ${cause.message ?? cause.shortMessage ?? String(spawnFailure)}`,
          details({ cause: spawnFailure }),
        ),
      );
    }
    // A line cut short by a crash is a symptom of it: the exit is what is reported.
    if (cutLine && exitCode !== 0) options.onDiagnostic?.(cutLine);
    if (signal !== undefined) {
      return subscriber.error(new ExitError(`${command} was killed by ${signal}`, details({ signal })));
    }
    if (exitCode !== 0) {
      const why = lastError === undefined ? '' : `: ${lastError}`;
      return subscriber.error(new ExitError(`${command} exited with code ${exitCode}${why}`, details({ exitCode })));
    }
    if (cutLine) return subscriber.error(new DecodeError(cutLine, details({ exitCode })));
    if (!sawDone) {
      return subscriber.error(new TruncatedStreamError(`${command} exited 0 without a done event`, details({ exitCode })));
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
      lifeline: options.lifeline,
      onStdout: guarded((chunk) => {
        if (subscriber.closed) return;
        const fatal = emit(decoder.write(chunk));
        if (fatal) fail(() => new DecodeError(fatal, details()));
      }),
      onStderr: guarded((chunk) => stderr.write(chunk)),
      onSettled: settled,
    });
  } catch (err) {
    // execa refuses some input before spawning, such as a NUL byte in an argument.
    subscriber.error(new SpawnError(`could not start ${JSON.stringify(command)}: ${(err as Error).message}`, { cause: err }));
    return undefined;
  }

  if (cli.pid !== undefined) {
    try {
      options.onSpawn?.(cli.pid);
    } catch (err) {
      fail(() => err);
    }
  }
  abortSignal?.addEventListener('abort', onAbort, { once: true });
  if (timeoutMs !== undefined) {
    timeoutTimer = setTimeout(
      () => fail(() => new TimeoutError(`run timed out after ${timeoutMs} ms`, details())),
      timeoutMs,
    );
  }
  return () => {
    cli?.stop();
    clearTimeout(timeoutTimer);
    abortSignal?.removeEventListener('abort', onAbort);
  };
}
