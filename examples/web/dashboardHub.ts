// How the dashboard runs what its page asks for: a scenario of the fake CLI
// at a speed, or a prompt for EvoSci; and a reply, as the run whose thread it
// resumes ran. The hub does the rest: ids, logs, readers, cancel, the cap.
import type { Observable } from 'rxjs';
import type { RunOptions } from 'evosci-rx';
import {
  RunRequestError,
  StartRequest,
  type FollowOptions,
  type IndexedEvent,
  type RunHub,
  type RunStatus,
  type StartedRun,
  type StartOptions,
} from 'evosci-rx/runs';
import { fakeEvoSci, type FakeStep } from 'evosci-rx/testing';
import { evosciCommand } from '../evosciCommand.js';
import { isScenario, MAX_SPEED, type Scenario } from './api.js';
import { scenarioSteps } from './scenarios.js';

export interface DashboardPolicyOptions {
  /** `--workdir` of every run. */
  readonly workdir?: string | undefined;
  /** Each stderr line of every run, with its id. */
  readonly onStderr?: ((id: string, line: string) => void) | undefined;
  /** The fake CLI's script for a scenario. Default: the recorded replays of scenarios.ts. */
  readonly scenarioSteps?: ((scenario: Scenario, speed: number) => FakeStep[]) | undefined;
}

/** Scenarios that stop for a person: run with `--no-auto-mode`, which is the server's choice, never a request's. */
const ASKING: ReadonlySet<Scenario> = new Set(['needs-input', 'sub-agent-approvals']);

/** A run's metadata, checked: the scenario (none: EvoSci) and the replay speed. */
function checkMetadata(metadata: Readonly<Record<string, string>> = {}): { scenario?: Scenario; speed: number } {
  const other = Object.keys(metadata).find((key) => key !== 'scenario' && key !== 'speed');
  if (other !== undefined)
    throw new RunRequestError(`a dashboard run's metadata has scenario and speed, not ${JSON.stringify(other)}`);
  const { scenario, speed = '1' } = metadata;
  if (scenario !== undefined && !isScenario(scenario))
    throw new RunRequestError(`unknown scenario ${JSON.stringify(scenario.slice(0, 40))}`);
  const pace = Number(speed);
  if (!(pace > 0 && pace <= MAX_SPEED)) throw new RunRequestError(`speed must be a number in (0, ${MAX_SPEED}]`);
  return { ...(scenario !== undefined && { scenario }), speed: pace };
}

/**
 * The hub's `runOptions`: everything about how a run starts (the command,
 * `--workdir`, auto mode) is decided here from the request's scenario and
 * speed. Keeps the process id of each run whose process is alive, which the
 * hub's statuses do not carry.
 */
export class DashboardPolicy {
  private readonly pids = new Map<string, number>();

  constructor(private readonly options: DashboardPolicyOptions = {}) {}

  /** Process ids by run id, while each process is alive. */
  get processes(): ReadonlyMap<string, number> {
    return this.pids;
  }

  /** Throws `RunRequestError` (400) for metadata it does not take. */
  runOptions(request: StartRequest, id: string): RunOptions {
    const { scenario, speed } = checkMetadata(request.metadata);
    const steps = (this.options.scenarioSteps ?? scenarioSteps)(scenario ?? 'demo', speed);
    // A prompt runs EvoSci when it is installed, else the demo replay (`DashboardHub` records it so).
    const cli = scenario === undefined ? evosciCommand(steps) : fakeEvoSci(steps);
    return {
      prompt: request.prompt,
      ...(request.resume !== undefined && { resume: request.resume }),
      workdir: this.options.workdir,
      command: cli.command,
      env: cli.env,
      autoMode: scenario === undefined || !ASKING.has(scenario),
      onStderr: (line) => this.options.onStderr?.(id, line),
      onSpawn: (pid) => this.pids.set(id, pid),
      onExit: () => this.pids.delete(id),
    };
  }
}

/**
 * The hub as the dashboard serves it. `runOptions` is synchronous and sees
 * only the request, so what depends on the hub's own runs is decided here,
 * before the start: a reply resumes a thread one of its runs reported
 * (`RunStatus.threadId`) and runs with that run's scenario and speed,
 * whatever it asks; a prompt run without EvoSci is recorded as the demo
 * replay it is.
 */
export class DashboardHub implements RunHub {
  constructor(private readonly hub: RunHub) {}

  async start(request: StartRequest, options?: StartOptions): Promise<StartedRun> {
    // The handler passes the body as it came: one of another shape goes on, for the hub to refuse saying why.
    if (!StartRequest.is(request)) return this.hub.start(request, options);
    const metadata =
      request.resume === undefined ? this.ownMetadata(request) : await this.threadMetadata(request.resume);
    return this.hub.start({ ...request, ...(metadata !== undefined && { metadata }) }, options);
  }

  follow(id: string, options?: FollowOptions): Observable<IndexedEvent> {
    return this.hub.follow(id, options);
  }

  status(id: string): Promise<RunStatus> {
    return this.hub.status(id);
  }

  list(): Promise<readonly RunStatus[]> {
    return this.hub.list();
  }

  cancel(id: string): Promise<RunStatus> {
    return this.hub.cancel(id);
  }

  close(): Promise<void> {
    return this.hub.close();
  }

  private ownMetadata(request: StartRequest): Record<string, string> | undefined {
    if (request.metadata?.['scenario'] !== undefined || !evosciCommand([]).fake) return request.metadata;
    return { ...request.metadata, scenario: 'demo' };
  }

  /** The metadata of the latest run that reported `thread`; `RunRequestError` if none did. */
  private async threadMetadata(thread: string): Promise<Record<string, string>> {
    const origin = (await this.hub.list()).findLast((run) => run.threadId === thread);
    if (!origin)
      throw new RunRequestError(
        `no run of this dashboard reported the thread ${JSON.stringify(thread.slice(0, 64))}: a reply resumes one of those`,
      );
    return origin.metadata ?? {};
  }
}
