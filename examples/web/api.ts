// The dashboard server's HTTP API, as both the server and the page see it.
// Types and constants only: no Node built-ins, no DOM.

/** Fake-CLI replays the server can start without EvoSci installed. */
export const SCENARIOS = {
  demo: 'a research run with sub-agents, replayed live',
  'needs-input': 'a run that stops at a question (--no-auto-mode)',
  slow: 'a run that stalls after a few steps, to cancel',
  'sub-agent-approvals': 'two sub-agents that stop for approval of the same call (--no-auto-mode)',
} as const;
export type Scenario = keyof typeof SCENARIOS;

export function isScenario(value: unknown): value is Scenario {
  return typeof value === 'string' && Object.hasOwn(SCENARIOS, value);
}

/** `POST /runs`: a scenario of the fake CLI, or a prompt for EvoSci (the demo replay when EvoSci is not configured). */
export interface StartRequest {
  readonly scenario?: Scenario;
  readonly prompt?: string;
  /** Replay speed of a fake run; 2 plays twice as fast. */
  readonly speed?: number;
  /**
   * A thread id a run of this dashboard reported (`RunInfo.threadId`): the
   * prompt goes to that thread as a new message (`--resume`), the way
   * `converse()` takes its next turn, with the same CLI as the run it follows.
   */
  readonly resume?: string;
}

/** What a thread id looks like: EvoSci's 8-character prefix of a uuid, a fake's name; never an option. */
export const THREAD_ID = /^[A-Za-z0-9][\w-]{0,63}$/;

/** Where a run is, on the server. */
export type RunState = 'running' | 'completed' | 'failed' | 'cancelled';

/** `GET /runs/:id`, and the answer to `POST /runs` and `DELETE /runs/:id`. */
export interface RunInfo {
  readonly id: string;
  readonly prompt: string;
  /** The fake CLI's scenario, or `undefined` for EvoSci itself. */
  readonly scenario: Scenario | undefined;
  /** The CLI's process id; `undefined` if it never started. */
  readonly pid: number | undefined;
  readonly state: RunState;
  /** Whether the process has exited (it may outlive `done` while EvoSci saves its memory). */
  readonly exited: boolean;
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  /** The run's error (`ExitError`, `SpawnError`, …), which its JSONL does not carry. */
  readonly error: string | undefined;
  /** The thread id from the resume hint the run printed as it exited: what a reply resumes. */
  readonly threadId: string | undefined;
  /** The thread this run resumed, for a reply. */
  readonly resumed: string | undefined;
  /** Events so far. */
  readonly events: number;
  readonly startedAt: number;
}
