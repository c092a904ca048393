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
}

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
  /** Events so far. */
  readonly events: number;
  readonly startedAt: number;
}
