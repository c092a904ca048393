import { config, type Subscriber, type TeardownLogic } from 'rxjs';
import { JsonlDecoder } from '../events/decode/JsonlDecoder.js';
import { SubscriberSink } from '../events/decode/SubscriberSink.js';
import type { DecodeIssue } from '../events/errors.js';
import {
  CancelledError,
  DecodeError,
  ExitError,
  SpawnError,
  TimeoutError,
  TruncatedStreamError,
  type EvoSciErrorDetails,
} from '../events/errors.js';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { whenAborted } from './abort.js';
import { BadLines } from './BadLines.js';
import type { CliHandle, CliResult, StartCli } from './CliProcess.js';
import type { Clock, Timer } from './clock.js';
import { argvProblem, STOP_SIGNALS, type ResolvedOptions } from './options.js';
import { StderrLog } from './StderrLog.js';

type RunEvent = EvoEvent | UnknownEvent;

/** Where a run's process and timers come from: the system's in use, virtual ones in tests. */
export interface RunEnvironment {
  readonly clock: Clock;
  readonly startCli: StartCli;
}

/** Why this side ended the run, built once the process is gone so that it can say how it went. */
type Failure = (ending: CliResult) => unknown;

/**
 * One subscription to a run: one process, from spawn to the end of the
 * Observable. It emits each event as its line is read, completes at `done`
 * (the process then has `lingerMs` to finish), and otherwise errors once the
 * process has exited, with what it printed while stopping.
 */
export class RunSession {
  private readonly decoder: JsonlDecoder;
  private readonly stderr: StderrLog;
  private readonly badLines: BadLines;
  private cli: CliHandle | undefined;
  private sawDone = false;
  /** The message of the last `error` event, for an `ExitError`. */
  private lastError: string | undefined;
  private failure: Failure | undefined;
  private timeoutTimer: Timer | undefined;
  private lingerTimer: Timer | undefined;
  private stopWaiting: (() => void) | undefined;
  private stopWatchingFlow: (() => void) | undefined;
  /** Where each line goes as it completes: its event to `next` while the subscriber is open, its issue to `badLines`. */
  private readonly lines: SubscriberSink;

  constructor(
    private readonly subscriber: Subscriber<RunEvent>,
    private readonly options: ResolvedOptions,
    private readonly environment: RunEnvironment,
  ) {
    this.decoder = new JsonlDecoder(options);
    this.stderr = new StderrLog(options.onStderr, options.stderrTailChars);
    this.badLines = new BadLines(options.onDiagnostic);
    const receiver = {
      get closed() {
        return subscriber.closed;
      },
      next: (event: RunEvent) => this.next(event),
    };
    this.lines = new SubscriberSink(receiver, { strict: options.strict, onDiagnostic: this.badLines.report });
  }

  /** Starts the process and its timers; returns the subscription's teardown. */
  start(): TeardownLogic {
    const { signal } = this.options;
    if (signal?.aborted) {
      return this.subscriber.error(new CancelledError('run aborted before it started', { cause: signal.reason }));
    }
    const tooLong = argvProblem(this.options.argv);
    if (tooLong !== undefined) return this.subscriber.error(new SpawnError(`${this.cannotStart()}: ${tooLong}`));
    try {
      this.cli = this.startCli();
    } catch (err) {
      // execa refuses some input before spawning, such as a NUL byte in an argument.
      return this.subscriber.error(new SpawnError(`${this.cannotStart()}: ${(err as Error).message}`, { cause: err }));
    }
    this.callApp(() => this.cli?.pid !== undefined && this.options.onSpawn?.(this.cli.pid));
    this.stopWaiting = signal && whenAborted(signal, () => this.fail((ending) => this.cancelled(ending)));
    this.stopWatchingFlow = this.options.flow?.watch((paused) => (paused ? this.cli?.pause() : this.cli?.resume()));
    this.startTimeout();
    return () => this.teardown();
  }

  private startCli(): CliHandle {
    const { command, argv, killGraceMs } = this.options;
    return this.environment.startCli(command, argv, {
      cwd: this.options.cwd,
      env: this.options.env,
      stopSignals: STOP_SIGNALS,
      graceMs: killGraceMs,
      lifeline: this.options.lifeline,
      clock: this.environment.clock,
      onStdout: (chunk) => this.callApp(() => this.readStdout(chunk)),
      onStderr: (chunk) => this.callApp(() => this.stderr.write(chunk)),
      onSettled: (result) => this.settled(result),
    });
  }

  private startTimeout(): void {
    const { timeoutMs } = this.options;
    if (timeoutMs === undefined) return;
    this.timeoutTimer = this.environment.clock.schedule(timeoutMs, () =>
      this.fail(
        (ending) =>
          new TimeoutError(`run timed out after ${timeoutMs} ms (${this.stopped(ending)})`, this.ended(ending)),
      ),
    );
  }

  /** An app callback (onDiagnostic, onStderr, onSpawn) that throws ends the run with its error, not the app. */
  private callApp(action: () => unknown): void {
    try {
      action();
    } catch (err) {
      this.fail(() => err);
    }
  }

  private readStdout(chunk: Uint8Array): void {
    // Once the run is ending, its output is no longer read; its stderr still is, for the resume hint.
    if (this.subscriber.closed || this.failure) return;
    const fatal = this.lines.feed(this.decoder, chunk);
    if (fatal) this.fail((ending) => new DecodeError(fatal, this.ended(ending)));
  }

  private next(event: RunEvent): void {
    if (event.type === 'error') this.lastError = String(event['message']);
    this.subscriber.next(event);
    if (event.type !== 'done' || this.sawDone) return;
    this.sawDone = true;
    // The run is over; the process may still save its memory: it has until lingerMs.
    this.lingerTimer = this.environment.clock.schedule(this.options.lingerMs, () => this.cli?.stop());
    this.timeoutTimer?.clear();
    this.subscriber.complete();
  }

  private fail(reason: Failure): void {
    if (this.sawDone) return;
    this.failure ??= reason;
    this.cli?.stop();
  }

  private teardown(): void {
    // After `done` the process is left its clean-up, bounded by lingerMs.
    if (!this.sawDone) this.cli?.stop();
    this.timeoutTimer?.clear();
    this.stopWaiting?.();
    this.stopWatchingFlow?.();
    // Its output is read to the end, for the resume hint and a clean exit.
    this.cli?.resume();
  }

  private settled(result: CliResult): void {
    this.timeoutTimer?.clear();
    this.lingerTimer?.clear();
    this.stopWaiting?.();
    this.stopWatchingFlow?.();
    // Flushing calls the app's callbacks; one that throws must not keep onExit from being called.
    let cutLine: DecodeIssue | undefined;
    this.callAppAtEnd(() => (cutLine = this.finishLines()));
    this.callAppAtEnd(() => this.stderr.end());
    try {
      this.options.onExit?.({
        pid: this.cli?.pid,
        exitCode: result.exitCode,
        signal: result.signal,
        durationMs: result.durationMs,
        threadId: this.stderr.threadId,
        done: this.sawDone,
      });
      if (!this.subscriber.closed) this.end(result, cutLine);
    } catch (err) {
      this.reportLate(err);
    }
  }

  /** The last line, if it had no newline; under `strict`, the issue of a bad one, for `end` to weigh against the exit. */
  private finishLines(): DecodeIssue | undefined {
    return this.lines.stopped ? undefined : this.lines.finish(this.decoder);
  }

  private callAppAtEnd(action: () => unknown): void {
    try {
      action();
    } catch (err) {
      this.failure ??= () => err;
    }
  }

  /** onExit threw: the run ends with it, or, if it already completed at `done`, the error is reported as RxJS reports errors it cannot deliver. */
  private reportLate(err: unknown): void {
    if (!this.subscriber.closed) this.subscriber.error(err);
    else if (config.onUnhandledError) config.onUnhandledError(err);
    else
      setTimeout(() => {
        throw err;
      });
  }

  /** The Observable's last word, from how the process ended. */
  private end(result: CliResult, cutLine: DecodeIssue | undefined): void {
    const { exitCode, signal, spawnFailure } = result;
    const { command } = this.options;
    if (this.failure) return this.subscriber.error(this.failure(result));
    if (spawnFailure !== undefined) return this.subscriber.error(this.spawnFailed(spawnFailure));
    // A line cut short by a crash is a symptom of it: the exit is what is reported.
    if (cutLine && exitCode !== 0) this.badLines.report(cutLine);
    if (signal !== undefined) {
      return this.subscriber.error(new ExitError(`${command} was killed by ${signal}`, this.details({ signal })));
    }
    if (exitCode !== 0) {
      const why = this.lastError === undefined ? '' : `: ${this.lastError}`;
      const message = `${command} exited with code ${exitCode}${why}${this.badLines.note}`;
      return this.subscriber.error(new ExitError(message, this.details({ exitCode })));
    }
    if (cutLine) return this.subscriber.error(new DecodeError(cutLine, this.details({ exitCode })));
    if (!this.sawDone) {
      const message = `${command} exited 0 without a done event${this.badLines.note}`;
      return this.subscriber.error(new TruncatedStreamError(message, this.details({ exitCode })));
    }
    this.subscriber.complete();
  }

  private spawnFailed(spawnFailure: unknown): SpawnError {
    const cause = spawnFailure as { message?: string; shortMessage?: string; code?: string };
    const { cwd } = this.options;
    const where = cwd ? ` in ${cwd}` : '';
    // A missing CLI is the first thing a new user meets: say where the command comes from.
    const hint =
      cause.code === 'ENOENT' && !(cwd && cause.message?.includes(cwd))
        ? `; install EvoScientist 0.2.1 or later (the first with stream-json), or point run() at it with the command option or EVOSCI_BIN`
        : '';
    const reason = cause.message ?? cause.shortMessage ?? 'unknown reason';
    return new SpawnError(`${this.cannotStart()}${where}: ${reason}${hint}`, this.details({ cause: spawnFailure }));
  }

  private cancelled(ending: CliResult): CancelledError {
    const cause: unknown = this.options.signal?.reason;
    return new CancelledError(`run aborted (${this.stopped(ending)})`, { ...this.ended(ending), cause });
  }

  private cannotStart(): string {
    return `could not start ${JSON.stringify(this.options.command)}`;
  }

  /** `stopped with SIGINT, then SIGTERM; killed by SIGTERM`: which signals it took, and how it ended. */
  private stopped({ exitCode, signal }: CliResult): string {
    const sent = this.cli?.signalsSent ?? [];
    const ended = signal !== undefined ? `killed by ${signal}` : `exited with code ${exitCode}`;
    return sent.length === 0 ? ended : `stopped with ${sent.join(', then ')}; ${ended}`;
  }

  private ended(result: CliResult): EvoSciErrorDetails {
    return this.details({ exitCode: result.exitCode, signal: result.signal });
  }

  private details(more: EvoSciErrorDetails = {}): EvoSciErrorDetails {
    return { stderrTail: this.stderr.tail, threadId: this.stderr.threadId, ...more };
  }
}
