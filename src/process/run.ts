import { execa } from 'execa';
import { Observable } from 'rxjs';
import { DecodeError } from '../errors/DecodeError.js';
import type { EvoSciErrorDetails } from '../errors/EvoSciErrorDetails.js';
import { CancelledError } from '../errors/CancelledError.js';
import { ExitError } from '../errors/ExitError.js';
import { SpawnError } from '../errors/SpawnError.js';
import { TimeoutError } from '../errors/TimeoutError.js';
import { TruncatedStreamError } from '../errors/TruncatedStreamError.js';
import { JsonlDecoder } from '../decode/JsonlDecoder.js';
import type { EvoEvent } from '../events/EvoEvent.js';
import type { UnknownEvent } from '../events/UnknownEvent.js';
import { buildArgs } from './buildArgs.js';
import type { ExitInfo } from './ExitInfo.js';
import { killGroupOnExit } from './killGroupOnExit.js';
import type { RunOptions } from './RunOptions.js';
import { signalTree } from './signalTree.js';
import { StderrLog } from './StderrLog.js';

const DEFAULT_KILL_GRACE_MS = 3000;
const POSIX = process.platform !== 'win32';

/** Starts the CLI; every option that shapes the child process is here. */
function spawn(command: string, options: RunOptions) {
  return execa(command, buildArgs(options), {
    cwd: options.cwd,
    env: options.env,
    extendEnv: true,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    // Its own process group, so the whole tree can be signalled and a terminal's Ctrl-C reaches the app first.
    detached: POSIX,
    cleanup: !POSIX,
    windowsHide: true,
  });
}

/**
 * One EvoSci run as a cold Observable of its events.
 *
 * Each subscription starts one process (`command --prompt=… --output-format=stream-json …`,
 * no shell) and emits each event as soon as its line is written. It completes
 * after a `done` event and exit status 0; otherwise it errors, after every
 * whole event, with `SpawnError`, `ExitError`, `TruncatedStreamError`,
 * `TimeoutError`, `CancelledError` or (with `strict`) `DecodeError`.
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
  return new Observable<EvoEvent | UnknownEvent>((subscriber) => {
    const command = options.command ?? process.env['EVOSCI_BIN'] ?? 'EvoSci';
    const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const stderr = new StderrLog(options.onStderr, options.stderrTailBytes);
    const details = (more: EvoSciErrorDetails = {}): EvoSciErrorDetails => ({
      stderrTail: stderr.tail,
      threadId: stderr.threadId,
      ...more,
    });

    let sawDone = false;
    let lastError: string | undefined;
    /** Why this side stopped the process (an EvoSciError, or what an app callback threw); reported once it has exited. */
    let stopReason: (() => unknown) | undefined;
    /** The process has exited (its output may still be draining). */
    let gone = false;
    /** The run is over: process exited and its output drained. */
    let ended = false;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    let timeoutTimer: ReturnType<typeof setTimeout> | undefined;
    let drainTimer: ReturnType<typeof setTimeout> | undefined;

    const decoder = new JsonlDecoder(
      {
        event: (event) => {
          if (event.type === 'done') sawDone = true;
          else if (event.type === 'error') lastError = (event as { message: string }).message;
          subscriber.next(event);
        },
        issue: (issue) => {
          // A line cut short at the end is a symptom of how the process ended, which the error reports.
          if (!options.strict || ended) return options.onDiagnostic?.(issue);
          decoder.stop();
          stopReason ??= () => new DecodeError(issue, details());
          stop();
        },
      },
      options,
    );

    if (options.signal?.aborted) {
      subscriber.error(new CancelledError('run aborted before it started', { cause: options.signal.reason }));
      return undefined;
    }

    const started = Date.now();
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, options);
    } catch (err) {
      // execa refuses some input before spawning, such as a NUL byte in an argument.
      subscriber.error(new SpawnError(`could not start ${JSON.stringify(command)}: ${(err as Error).message}`, { cause: err }));
      return undefined;
    }
    const pid = child.pid;
    const forget = pid === undefined ? undefined : killGroupOnExit(pid);

    function stop(reason?: () => unknown): void {
      if (ended) return;
      stopReason ??= reason;
      if (gone) {
        // Exited, but something it started (in a session of its own) still holds the output open.
        child.stdout?.destroy();
        child.stderr?.destroy();
        return;
      }
      if (killTimer !== undefined) return;
      signal('SIGTERM');
      killTimer = setTimeout(() => signal('SIGKILL'), killGraceMs);
    }
    function signal(name: NodeJS.Signals): void {
      if (POSIX && pid !== undefined && signalTree(pid, name)) return;
      child.kill(name);
    }

    // An app callback (onDiagnostic, onStderr) that throws ends the run with its error, not the app.
    const guarded = (write: (chunk: Uint8Array) => void) => (chunk: Uint8Array) => {
      try {
        write(chunk);
      } catch (err) {
        decoder.stop();
        stopReason ??= () => err;
        stop();
      }
    };
    child.stdout?.on('data', guarded((chunk) => decoder.write(chunk)));
    child.stderr?.on('data', guarded((chunk) => stderr.write(chunk)));
    child.once('exit', () => {
      gone = true;
      clearTimeout(killTimer);
      // The CLI is gone; what it left running in its group goes too, and with it
      // any copy of the output pipes that would keep the run from ending.
      if (POSIX && pid !== undefined) signalTree(pid, 'SIGKILL');
      // A process that left the group can still hold them: once the CLI's own
      // output has had time to drain, stop reading.
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, killGraceMs);
    });

    if (pid !== undefined) {
      try {
        options.onSpawn?.(pid);
      } catch (err) {
        stop(() => err);
      }
    }

    const onAbort = () => stop(() => new CancelledError('run aborted', details({ cause: options.signal?.reason })));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs !== undefined) {
      timeoutTimer = setTimeout(
        () => stop(() => new TimeoutError(`run timed out after ${options.timeoutMs} ms`, details())),
        options.timeoutMs,
      );
    }

    child.then(
      (result) => {
        ended = true;
        clearTimeout(killTimer);
        clearTimeout(timeoutTimer);
        clearTimeout(drainTimer);
        options.signal?.removeEventListener('abort', onAbort);
        forget?.();
        try {
          finish(result);
        } catch (err) {
          // A callback of the app threw (onExit, onDiagnostic, onStderr): the run ends with it.
          subscriber.error(err);
        }
      },
      (err: unknown) => subscriber.error(err),
    );

    function finish(result: Awaited<typeof child>): void {
      // Flushing calls the app's callbacks; one that throws must not keep onExit from being called.
      for (const flush of [() => decoder.end(), () => stderr.end()]) {
        try {
          flush();
        } catch (err) {
          stopReason ??= () => err;
        }
      }
      const exitCode = result.exitCode;
      const signalName = result.signal;
      const info: ExitInfo = {
        pid: child.pid,
        exitCode,
        signal: signalName,
        durationMs: Date.now() - started,
        threadId: stderr.threadId,
        done: sawDone,
      };
      options.onExit?.(info);
      if (subscriber.closed) return;

      if (stopReason) return subscriber.error(stopReason());
      if (exitCode === undefined && signalName === undefined) {
        return subscriber.error(
          new SpawnError(
            `could not start ${JSON.stringify(command)}${options.cwd ? ` in ${options.cwd}` : ''}: ${
              (result.cause as Error | undefined)?.message ?? result.shortMessage
            }`,
            details({ cause: result.cause }),
          ),
        );
      }
      if (signalName !== undefined) {
        return subscriber.error(
          new ExitError(`${command} was killed by ${signalName}`, details({ signal: signalName })),
        );
      }
      if (exitCode !== 0) {
        const why = lastError === undefined ? '' : `: ${lastError}`;
        return subscriber.error(new ExitError(`${command} exited with code ${exitCode}${why}`, details({ exitCode })));
      }
      if (!sawDone) {
        return subscriber.error(
          new TruncatedStreamError(`${command} exited 0 without a done event`, details({ exitCode })),
        );
      }
      subscriber.complete();
    }

    return () => {
      decoder.stop();
      stop();
      clearTimeout(timeoutTimer);
      options.signal?.removeEventListener('abort', onAbort);
    };
  });
}
