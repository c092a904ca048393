import { execa } from 'execa';
import { startLifeline, type Lifeline } from './lifeline.js';
import { killGroupOnExit, signalGroup } from './processGroup.js';
import type { Clock, Timer } from './clock.js';
import { StopLadder } from './StopLadder.js';

const POSIX = process.platform !== 'win32';

/**
 * Where a `CliProcess` is in its life:
 * - `running`: started, nobody asked it to stop;
 * - `stopping`: asked to stop, the stop signals being sent one by one;
 * - `exited`: the process is gone, its output still draining (a process it
 *   started in a session of its own may hold the pipes);
 * - `settled`: exited and drained; `onSettled` has been called.
 */
type CliPhase = 'running' | 'stopping' | 'exited' | 'settled';

/** How a `CliProcess` ended. */
export interface CliResult {
  readonly exitCode: number | undefined;
  readonly signal: NodeJS.Signals | undefined;
  /** Why it never ran, when it did not start. */
  readonly spawnFailure: unknown;
  readonly durationMs: number;
}

export interface CliProcessOptions {
  readonly cwd?: string | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Signals sent to the group, in turn, when stopping; each after `graceMs` if the process is still there. */
  readonly stopSignals: readonly NodeJS.Signals[];
  /** Milliseconds between stop signals, and how long output may drain after the process exited. */
  readonly graceMs: number;
  /** Start a watchdog that stops the group if this Node process dies, even by SIGKILL (see `startLifeline`). */
  readonly lifeline?: boolean | undefined;
  readonly clock: Clock;
  readonly onStdout: (chunk: Uint8Array) => void;
  readonly onStderr: (chunk: Uint8Array) => void;
  readonly onSettled: (result: CliResult) => void;
}

/** What a run needs of its process: a `CliProcess`, or a stand-in that runs in virtual time. */
export interface CliHandle {
  readonly pid: number | undefined;
  /** The stop signals sent so far, in order. */
  readonly signalsSent: readonly NodeJS.Signals[];
  stop(): void;
  /** Stops reading stdout until `resume`: its pipe fills and the process waits on its writes. */
  pause(): void;
  resume(): void;
}

/** Starts a process; throws for input it cannot be given. */
export type StartCli = (command: string, args: readonly string[], options: CliProcessOptions) => CliHandle;

function spawnCli(command: string, args: readonly string[], options: CliProcessOptions) {
  return execa(command, args, {
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
 * One child process of the CLI, from spawn to settled, in a process group of
 * its own: stopping it signals the whole group, and what the CLI leaves
 * running in the group when it exits is killed. Throws for input the process
 * cannot be given (a NUL byte in an argument).
 */
export class CliProcess implements CliHandle {
  readonly pid: number | undefined;
  private current: CliPhase = 'running';
  private readonly child: ReturnType<typeof spawnCli>;
  private readonly started: number;
  private readonly ladder: StopLadder;
  private drainTimer: Timer | undefined;
  private readonly forget: (() => void) | undefined;
  private readonly lifeline: Lifeline | undefined;

  constructor(
    command: string,
    args: readonly string[],
    private readonly options: CliProcessOptions,
  ) {
    this.started = options.clock.now();
    this.child = spawnCli(command, args, options);
    this.ladder = new StopLadder(options.stopSignals, options.graceMs, options.clock, (signal) => this.signal(signal));
    this.pid = this.child.pid;
    this.forget = this.pid === undefined ? undefined : killGroupOnExit(this.pid);
    try {
      this.lifeline =
        options.lifeline && POSIX && this.pid !== undefined
          ? startLifeline(this.pid, options.stopSignals, options.graceMs)
          : undefined;
    } catch (err) {
      // The group was stopped with the watchdog that could not guard it; the run reports the reason as SpawnError.
      this.forget?.();
      throw err;
    }
    this.child.stdout?.on('data', options.onStdout);
    this.child.stderr?.on('data', options.onStderr);
    this.child.once('exit', () => this.exited());
    void this.child.then((result) =>
      this.settle({
        exitCode: result.exitCode,
        signal: result.signal,
        spawnFailure:
          result.exitCode === undefined && result.signal === undefined ? (result.cause ?? result) : undefined,
        durationMs: this.options.clock.now() - this.started,
      }),
    );
  }

  /** Stops the process (its group, signal after signal), or stops reading what it left holding the output. */
  stop(): void {
    if (this.current === 'running') {
      this.current = 'stopping';
      this.ladder.climb();
    } else if (this.current === 'exited') {
      this.closeOutput();
    }
  }

  pause(): void {
    this.child.stdout?.pause();
  }

  resume(): void {
    this.child.stdout?.resume();
  }

  /** The stop signals sent so far, in order. */
  get signalsSent(): readonly NodeJS.Signals[] {
    return this.ladder.signalsSent;
  }

  private signal(signal: NodeJS.Signals): void {
    if (POSIX && this.pid !== undefined && signalGroup(this.pid, signal)) return;
    this.child.kill(signal);
  }

  private exited(): void {
    if (this.current === 'settled') return;
    this.current = 'exited';
    this.ladder.halt();
    // The CLI is gone; what it left running in its group goes too, and with it
    // any copy of the output pipes that would keep the run from ending.
    if (POSIX && this.pid !== undefined) signalGroup(this.pid, 'SIGKILL');
    // A process that left the group can still hold them: once the CLI's own
    // output has had time to drain, stop reading.
    this.drainTimer = this.options.clock.schedule(this.options.graceMs, () => this.closeOutput());
  }

  private closeOutput(): void {
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }

  private settle(result: CliResult): void {
    this.current = 'settled';
    this.ladder.halt();
    this.drainTimer?.clear();
    this.forget?.();
    this.lifeline?.release();
    this.options.onSettled(result);
  }
}
