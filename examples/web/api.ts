// The dashboard's vocabulary, as both the server and the page see it: its
// scenarios, and what its runs carry in the hub's `metadata`. The API itself
// is the runs handler's (`POST /runs` → `{id}`, `GET /runs[/:id]` →
// `RunStatus`, `DELETE /runs/:id`, `GET /runs/:id/events`).
// Types and constants only: no Node built-ins, no DOM.
import type { RunStatus } from 'evosci-rx/events';

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

/** The prompt each recorded run was given: what the page sends when no prompt is typed. */
export const SCENARIO_PROMPTS: Readonly<Record<Scenario, string>> = {
  demo: 'Survey recent work on sparse attention and write notes.md',
  'needs-input': 'Train a baseline image classifier on the data in /data',
  slow: 'Survey recent work on sparse attention and write notes.md',
  'sub-agent-approvals': 'Clean the cache of both data shards',
};

/** The fastest replay the server takes: `metadata.speed` is a number in (0, MAX_SPEED]. */
export const MAX_SPEED = 100;

/**
 * A dashboard run's `metadata` (strings, as the hub keeps them): the fake
 * CLI's scenario, none for EvoSci itself, and the replay speed (`"2"` plays
 * twice as fast; default `"1"`). The server records what it ran: a prompt
 * run without EvoSci installed says `scenario: "demo"`, and a reply carries
 * the metadata of the run whose thread it resumes.
 */
export interface RunMetadata {
  readonly scenario?: Scenario;
  readonly speed?: string;
}

/**
 * `POST /runs` as the page sends it: a prompt, and its scenario and speed; a
 * reply also names the thread a run of this dashboard reported
 * (`RunStatus.threadId`), which it resumes as a new message, the way
 * `converse()` takes its next turn.
 */
export interface StartRequest {
  readonly prompt: string;
  readonly resume?: string;
  readonly metadata?: RunMetadata;
}

/** The scenario a run replays; `undefined` for EvoSci itself. */
export function scenarioOf(status: RunStatus): Scenario | undefined {
  const scenario = status.metadata?.['scenario'];
  return isScenario(scenario) ? scenario : undefined;
}

/** The metadata a reply carries: that of the run whose thread it resumes. */
export function metadataOf(status: RunStatus): RunMetadata {
  const scenario = scenarioOf(status);
  const speed = status.metadata?.['speed'];
  return { ...(scenario !== undefined && { scenario }), ...(speed !== undefined && { speed }) };
}

/** Whether the run has ended, one way or another. */
export function hasEnded(status: RunStatus): boolean {
  return status.state !== 'queued' && status.state !== 'running';
}
