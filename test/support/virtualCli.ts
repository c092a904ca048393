import type { CliHandle, CliProcessOptions, StartCli } from '../../src/process/CliProcess.js';
import type { Timer } from '../../src/process/clock.js';
import { StopLadder } from '../../src/process/StopLadder.js';

/** What a virtual CLI does on a stop signal: nothing, or exit with a code after a while, maybe printing first. */
export type SignalReaction =
  'ignore' | { readonly exitCode: number; readonly afterMs?: number; readonly stderr?: string };

/** The script of a virtual CLI, its times in virtual milliseconds from its start. */
export interface VirtualScript {
  /** Lines written to stdout, each at its time. */
  readonly stdout?: readonly (readonly [at: number, line: string])[];
  /** Lines written to stderr, each at its time. */
  readonly stderr?: readonly (readonly [at: number, line: string])[];
  /** When it exits on its own, and with what code; without it, it runs until stopped. */
  readonly exit?: readonly [at: number, exitCode: number];
  /** How it takes each signal; a signal not named kills it. */
  readonly onSignal?: Partial<Record<NodeJS.Signals, SignalReaction>>;
}

/** What a virtual CLI went through, for the test to check. */
export interface VirtualLog {
  readonly started: { command: string; args: readonly string[] }[];
  /** Each signal it received, with the virtual time it arrived. */
  readonly signals: (readonly [at: number, signal: NodeJS.Signals])[];
  /** Each pause and resume of its stdout, with its virtual time. */
  readonly pauses: (readonly [at: number, what: 'pause' | 'resume'])[];
}

const bytes = (line: string) => new TextEncoder().encode(`${line}\n`);

/**
 * A stand-in for `CliProcess` that plays a script on the run's clock and
 * takes stop signals through the same `StopLadder`: the lifecycle of a run
 * (timeouts, linger, the signal ladder) in virtual time.
 */
class VirtualCli implements CliHandle {
  readonly pid = 4242;
  private readonly ladder: StopLadder;
  private readonly timers: Timer[] = [];
  private readonly started: number;
  private gone = false;

  constructor(
    private readonly script: VirtualScript,
    private readonly options: CliProcessOptions,
    private readonly log: VirtualLog,
  ) {
    const { clock } = options;
    this.started = clock.now();
    this.ladder = new StopLadder(options.stopSignals, options.graceMs, clock, (signal) => this.receive(signal));
    for (const [at, line] of script.stdout ?? []) this.later(at, () => options.onStdout(bytes(line)));
    for (const [at, line] of script.stderr ?? []) this.later(at, () => options.onStderr(bytes(line)));
    if (script.exit) {
      const [at, exitCode] = script.exit;
      this.later(at, () => this.end(exitCode, undefined));
    }
  }

  get signalsSent(): readonly NodeJS.Signals[] {
    return this.ladder.signalsSent;
  }

  stop(): void {
    if (!this.gone) this.ladder.climb();
  }

  pause(): void {
    this.log.pauses.push([this.options.clock.now(), 'pause']);
  }

  resume(): void {
    this.log.pauses.push([this.options.clock.now(), 'resume']);
  }

  private later(at: number, action: () => void): void {
    this.timers.push(this.options.clock.schedule(at - (this.options.clock.now() - this.started), action));
  }

  private receive(signal: NodeJS.Signals): void {
    this.log.signals.push([this.options.clock.now(), signal]);
    const reaction = this.script.onSignal?.[signal];
    if (reaction === 'ignore') return;
    if (reaction === undefined) return this.end(undefined, signal);
    const { exitCode, afterMs = 0, stderr } = reaction;
    this.timers.push(
      this.options.clock.schedule(afterMs, () => {
        if (stderr !== undefined) this.options.onStderr(bytes(stderr));
        this.end(exitCode, undefined);
      }),
    );
  }

  private end(exitCode: number | undefined, signal: NodeJS.Signals | undefined): void {
    if (this.gone) return;
    this.gone = true;
    this.ladder.halt();
    for (const timer of this.timers) timer.clear();
    const durationMs = this.options.clock.now() - this.started;
    this.options.onSettled({ exitCode, signal, spawnFailure: undefined, durationMs });
  }
}

/** A `StartCli` that starts virtual CLIs playing `script`, and the log of what they went through. */
export function virtualCli(script: VirtualScript): { startCli: StartCli; log: VirtualLog } {
  const log: VirtualLog = { started: [], signals: [], pauses: [] };
  const startCli: StartCli = (command, args, options) => {
    log.started.push({ command, args });
    return new VirtualCli(script, options, log);
  };
  return { startCli, log };
}
