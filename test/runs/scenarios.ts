// The fake CLI scripts the hub tests start, chosen by a request's
// `metadata.scenario`, each logging its start to a file so that a test
// counts processes, not requests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunOptions } from '../../src/process/run.js';
import type { StartRequest } from '../../src/runs/wire.js';
import { fakeEvoSci, type FakeStep } from '../../testing/index.js';

export const DEMO = new URL('../../examples/transcripts/demo-run.jsonl', import.meta.url).pathname;
export const DEMO_EVENTS = readFileSync(DEMO, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '').length;

/**
 * Scenarios: `demo` completes (`paced`: an event every 10 ms; `gated`: its
 * first two events, then the rest once the file `go` is in the dir;
 * `lingers`: whole, then, as EvoSci saves its memory after `done`, waits for
 * the file `exit` before it prints its thread and exits), `fail` exits 3
 * after two events, `slow` writes two events and waits to be stopped.
 */
export type Scenario = 'demo' | 'paced' | 'gated' | 'lingers' | 'fail' | 'slow';

function steps(scenario: Scenario, dir: string): FakeStep[] {
  const start: FakeStep = { record: join(dir, 'spawns.jsonl'), append: true };
  const two: FakeStep = { transcript: DEMO, count: 2 };
  switch (scenario) {
    case 'demo':
      return [start, { transcript: DEMO }, { resumeHint: 'demo-thread' }];
    case 'paced':
      return [start, { transcript: DEMO, delayMs: 10 }];
    case 'gated':
      return [start, two, { waitForFile: join(dir, 'go') }, { transcript: DEMO, from: 2 }];
    case 'lingers':
      return [start, { transcript: DEMO }, { waitForFile: join(dir, 'exit') }, { resumeHint: 'lingered-thread' }];
    case 'fail':
      return [start, two, { stderr: 'Traceback: ModelError' }, { exit: 3 }];
    case 'slow':
      return [
        start,
        { grandchild: join(dir, 'grandchild.pid') },
        { handleSigint: { resumeHint: 'slow-thread' } },
        two,
        { hang: true },
      ];
  }
}

/** `runOptions` for a hub or a worker: the scenario the request names, in `dir`, resuming the thread it names. */
export function scenarioRunOptions(
  dir: string,
): (request: Pick<StartRequest, 'prompt' | 'metadata' | 'resume'>) => RunOptions {
  return (request) => {
    const scenario = (request.metadata?.['scenario'] ?? 'demo') as Scenario;
    return {
      prompt: request.prompt,
      killGraceMs: 2000,
      lingerMs: 5000,
      ...(request.resume !== undefined && { resume: request.resume }),
      ...fakeEvoSci(steps(scenario, dir)),
    };
  };
}

/** The processes started so far, by their records. */
export function spawnsIn(dir: string): { pid: number; argv: string[] }[] {
  let text = '';
  try {
    text = readFileSync(join(dir, 'spawns.jsonl'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { pid: number; argv: string[] });
}

export const request = (scenario: Scenario, prompt = `a ${scenario} run`): StartRequest => ({
  prompt,
  metadata: { scenario },
});
