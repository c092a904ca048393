// The runs a dashboard server has started: one `run()` subscription each,
// its events kept for readers who come late, and the cancel that stops it.
// A few at once, and only the latest finished ones are remembered.
import { randomUUID } from 'node:crypto';
import type { Subscription } from 'rxjs';
import { run, toJsonl, type ExitInfo, type RunOptions } from 'evosci-rx';
import { fakeEvoSci, type FakeStep } from 'evosci-rx/testing';
import { evosciCommand } from '../evosciCommand.js';
import type { RunInfo, RunState, Scenario, StartRequest } from './api.js';
import { RunLog } from './runLog.js';
import { SCENARIO_PROMPTS, scenarioSteps } from './scenarios.js';

/**
 * One run. The server is its only subscriber, so every reader and the cancel
 * act on the same process; readers read its events from its log, held whole
 * until the run is forgotten.
 */
export class LiveRun {
  readonly startedAt = Date.now();
  /** The run's events, read from the first by each reader at its own pace; ends when the run ends. */
  readonly log = new RunLog();
  /** Resolves once the process has exited, or at once if it never started. */
  readonly exited: Promise<void>;
  private state: RunState = 'running';
  private pid: number | undefined;
  private exit: ExitInfo | undefined;
  private error: string | undefined;
  private count = 0;
  private size = 0;
  private gone = false;
  private readonly subscription: Subscription;
  private markExited!: () => void;

  /** `onSettled` is called once the run has ended and its process is gone. */
  constructor(
    readonly id: string,
    readonly prompt: string,
    readonly scenario: Scenario | undefined,
    /** The fake CLI's replay speed, which a reply to this run keeps. */
    readonly speed: number,
    private readonly options: RunOptions,
    private readonly onSettled: () => void,
  ) {
    this.exited = new Promise<void>((resolve) => (this.markExited = resolve)).then(() => {
      this.gone = true;
      if (this.settled) onSettled();
    });
    this.subscription = run({
      ...options,
      onSpawn: (pid) => (this.pid = pid),
      onExit: (info) => {
        this.exit = info;
        this.markExited();
      },
    }).subscribe({
      next: (event) => {
        this.count++;
        // What the log holds, measured as it is sent.
        this.size += Buffer.byteLength(toJsonl(event));
        this.log.append(event);
      },
      error: (err: unknown) => this.end('failed', err instanceof Error ? err.message : String(err)),
      complete: () => this.end('completed'),
    });
  }

  /** Whether the run has ended and its process is gone: only then may it be forgotten. */
  get settled(): boolean {
    return this.gone && this.state !== 'running';
  }

  /** The size, as JSONL, of the events held for late readers. */
  get bytes(): number {
    return this.size;
  }

  info(): RunInfo {
    return {
      id: this.id,
      prompt: this.prompt,
      scenario: this.scenario,
      pid: this.pid,
      state: this.state,
      exited: this.exit !== undefined || this.pid === undefined,
      exitCode: this.exit?.exitCode,
      signal: this.exit?.signal,
      threadId: this.exit?.threadId,
      resumed: this.options.resume,
      error: this.error,
      events: this.count,
      startedAt: this.startedAt,
    };
  }

  /** Stops the run (its process and the processes it started) and waits until the process is gone. */
  async cancel(): Promise<RunInfo> {
    if (this.state === 'running') {
      this.subscription.unsubscribe();
      this.end('cancelled');
    }
    await this.exited;
    return this.info();
  }

  private end(state: RunState, error?: string): void {
    this.state = state;
    this.error = error;
    // A run that could not spawn has no exit to wait for.
    if (this.pid === undefined) this.markExited();
    this.log.complete();
    if (this.settled) this.onSettled();
  }
}

export interface RunsOptions {
  /** `--workdir` for EvoSci runs. */
  readonly workdir?: string | undefined;
  /** Each stderr line of every run, with its id. */
  readonly onStderr?: ((id: string, line: string) => void) | undefined;
  /** Runs whose process is alive at once; one more is refused. Default 4. */
  readonly maxRuns?: number | undefined;
  /** Finished runs remembered, newest first. Default 20. */
  readonly keepFinished?: number | undefined;
  /** JSONL held for all runs together, in bytes, beyond which the oldest finished runs are forgotten. Default 64 MiB. */
  readonly keepBytes?: number | undefined;
  /** The fake CLI's script for a scenario. Default: the recorded replays of scenarios.ts. */
  readonly scenarioSteps?: ((scenario: Scenario, speed: number) => FakeStep[]) | undefined;
}

/** A start refused because `maxRuns` runs are going. */
export class TooManyRunsError extends Error {
  constructor(readonly maxRuns: number) {
    super(`${maxRuns} runs are going, the most this dashboard runs at once: wait for one to end, or cancel one`);
  }
}

/** A reply to a thread no run of this dashboard reported. */
export class UnknownThreadError extends Error {
  constructor(readonly thread: string) {
    super(`no run of this dashboard reported the thread ${JSON.stringify(thread)}: a reply resumes one of those`);
  }
}

function limit(name: string, value: number | undefined, fallback: number): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a whole number of at least 1`);
  return n;
}

/** Every run the server remembers, by id, in the order they started. */
export class Runs {
  private readonly runs = new Map<string, LiveRun>();
  private readonly maxRuns: number;
  private readonly keepFinished: number;
  private readonly keepBytes: number;

  constructor(private readonly options: RunsOptions = {}) {
    this.maxRuns = limit('maxRuns', options.maxRuns, 4);
    this.keepFinished = limit('keepFinished', options.keepFinished, 20);
    this.keepBytes = limit('keepBytes', options.keepBytes, 64 * 1024 * 1024);
  }

  /**
   * Starts a run: a scenario of the fake CLI, or the prompt for EvoSci (the
   * fake CLI's demo replay when EvoSci is not installed, as in the other
   * examples). Throws `TooManyRunsError` when `maxRuns` processes are alive.
   */
  start(request: StartRequest): LiveRun {
    const alive = [...this.runs.values()].filter((r) => !r.settled).length;
    if (alive >= this.maxRuns) throw new TooManyRunsError(this.maxRuns);
    const id = randomUUID().slice(0, 8);
    const steps = this.options.scenarioSteps ?? scenarioSteps;
    // A reply runs the same CLI, at the same pace, as the run whose thread it resumes.
    const origin = request.resume === undefined ? undefined : this.thread(request.resume);
    const asked = origin ? origin.scenario : request.scenario;
    const speed = origin ? origin.speed : (request.speed ?? 1);
    const prompt = request.prompt?.trim() || SCENARIO_PROMPTS[asked ?? 'demo'];
    const cli = asked ? fakeEvoSci(steps(asked, speed)) : evosciCommand(steps('demo', speed));
    // Without EvoSci the prompt run is the demo replay: say so.
    const scenario = asked ?? ('fake' in cli && cli.fake ? 'demo' : undefined);
    const options: RunOptions = {
      prompt,
      ...(request.resume !== undefined && { resume: request.resume }),
      workdir: this.options.workdir,
      command: cli.command,
      env: cli.env,
      autoMode: asked !== 'needs-input',
      onStderr: (line) => this.options.onStderr?.(id, line),
    };
    const live = new LiveRun(id, prompt, scenario, speed, options, () => this.forgetOld());
    this.runs.set(id, live);
    return live;
  }

  /** The run that reported `thread`, which a reply follows. */
  private thread(thread: string): LiveRun {
    const origin = [...this.runs.values()].find((r) => r.info().threadId === thread);
    if (!origin) throw new UnknownThreadError(thread);
    return origin;
  }

  get(id: string): LiveRun | undefined {
    return this.runs.get(id);
  }

  list(): RunInfo[] {
    return [...this.runs.values()].map((r) => r.info());
  }

  /** Cancels every run still going and waits until all their processes are gone. */
  async close(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.cancel()));
  }

  /** Forgets the oldest finished runs while too many are remembered or their lines hold too much. */
  private forgetOld(): void {
    const finished = [...this.runs.values()].filter((r) => r.settled);
    let bytes = [...this.runs.values()].reduce((sum, r) => sum + r.bytes, 0);
    for (const [i, old] of finished.entries()) {
      if (finished.length - i <= this.keepFinished && bytes <= this.keepBytes) break;
      this.runs.delete(old.id);
      bytes -= old.bytes;
    }
  }
}
