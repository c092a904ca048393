// The runs a dashboard server has started: one `run()` subscription each,
// its JSONL kept for readers who come late, and the cancel that stops it.
import { randomUUID } from 'node:crypto';
import { ReplaySubject, type Subscription } from 'rxjs';
import { run, toJsonl, type ExitInfo, type RunOptions } from 'evosci-rx';
import { fakeEvoSci } from 'evosci-rx/testing';
import { evosciCommand } from '../evosciCommand.js';
import type { RunInfo, RunState, Scenario, StartRequest } from './api.js';
import { SCENARIO_PROMPTS, scenarioSteps } from './scenarios.js';

/**
 * One run. The server is its only subscriber, so every reader and the cancel
 * act on the same process; readers get its lines from a replay of the whole
 * run (held in memory until the server closes: a demo's runs are small).
 */
export class LiveRun {
  readonly startedAt = Date.now();
  /** The run as JSONL lines, replayed from the first to each new reader; completes when the run ends. */
  readonly lines = new ReplaySubject<string>();
  /** Resolves once the process has exited, or at once if it never started. */
  readonly exited: Promise<void>;
  private state: RunState = 'running';
  private pid: number | undefined;
  private exit: ExitInfo | undefined;
  private error: string | undefined;
  private events = 0;
  private readonly subscription: Subscription;
  private markExited!: () => void;

  constructor(
    readonly id: string,
    readonly prompt: string,
    readonly scenario: Scenario | undefined,
    options: RunOptions,
  ) {
    this.exited = new Promise((resolve) => (this.markExited = resolve));
    this.subscription = run({
      ...options,
      onSpawn: (pid) => (this.pid = pid),
      onExit: (info) => {
        this.exit = info;
        this.markExited();
      },
    }).subscribe({
      next: (event) => {
        this.events++;
        this.lines.next(toJsonl(event));
      },
      error: (err: unknown) => this.end('failed', err instanceof Error ? err.message : String(err)),
      complete: () => this.end('completed'),
    });
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
      error: this.error,
      events: this.events,
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
    this.lines.complete();
  }
}

export interface RunsOptions {
  /** `--workdir` for EvoSci runs. */
  readonly workdir?: string;
  /** Each stderr line of every run, with its id. */
  readonly onStderr?: (id: string, line: string) => void;
}

/** Every run the server has started, by id. */
export class Runs {
  private readonly runs = new Map<string, LiveRun>();

  constructor(private readonly options: RunsOptions = {}) {}

  /**
   * Starts a run: a scenario of the fake CLI, or the prompt for EvoSci (the
   * fake CLI's demo replay when EvoSci is not installed, as in the other examples).
   */
  start(request: StartRequest): LiveRun {
    const id = randomUUID().slice(0, 8);
    const speed = request.speed ?? 1;
    const prompt = request.prompt?.trim() || SCENARIO_PROMPTS[request.scenario ?? 'demo'];
    const cli = request.scenario
      ? fakeEvoSci(scenarioSteps(request.scenario, speed))
      : evosciCommand(scenarioSteps('demo', speed));
    // Without EvoSci the prompt run is the demo replay: say so.
    const scenario = request.scenario ?? ('fake' in cli && cli.fake ? 'demo' : undefined);
    const live = new LiveRun(id, prompt, scenario, {
      prompt,
      workdir: this.options.workdir,
      command: cli.command,
      env: cli.env,
      autoMode: request.scenario !== 'needs-input',
      onStderr: (line) => this.options.onStderr?.(id, line),
    });
    this.runs.set(id, live);
    return live;
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
}
