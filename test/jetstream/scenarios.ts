// The fake CLI's scenarios the JetStream tests run, locally and through workers.
import { join } from 'node:path';
import type { RunOptions } from '../../src/process/run.js';
import { fakeEvoSci, type FakeStep } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';

export type Scenario = 'success' | 'crash' | 'error' | 'needs-input' | 'slow' | 'paced' | 'hang';
export const SCENARIOS: readonly Scenario[] = ['success', 'crash', 'error', 'needs-input'];

/** Where a `hang` run, whose tag is a directory, logs each start and writes its tool's pid. */
export function hangFiles(dir: string): { readonly starts: string; readonly grandchild: string } {
  return { starts: join(dir, 'starts.jsonl'), grandchild: join(dir, 'grandchild.pid') };
}

/**
 * The fake CLI's steps for a scenario; `slow` paces a long run so that it can
 * be interrupted; `hang` runs until stopped, with a tool of its own, and
 * takes its tag as the directory of its `hangFiles`.
 */
export function scenarioSteps(scenario: Scenario, tag = 'untagged'): FakeStep[] {
  switch (scenario) {
    case 'hang':
      return [
        { record: hangFiles(tag).starts, append: true },
        { transcript: fixturePath('contract-example.jsonl'), count: 2 },
        { grandchild: hangFiles(tag).grandchild },
        { hang: true },
      ];
    case 'success':
      return [{ transcript: fixturePath('contract-example.jsonl') }, { resumeHint: 'thread-ok' }];
    case 'crash':
      return [
        { transcript: fixturePath('research-run.jsonl'), count: 12 },
        { stderr: 'Traceback: worker fell over' },
        { kill: 'SIGKILL' },
      ];
    case 'error':
      return [
        { transcript: fixturePath('error-run.jsonl') },
        { stderr: 'Error code: 529' },
        { resumeHint: 'thread-err' },
        { exit: 1 },
      ];
    case 'needs-input':
      return [{ transcript: fixturePath('needs-input-approval.jsonl') }, { resumeHint: 'thread-hitl' }];
    case 'slow':
      return [{ transcript: fixturePath('examples/transcripts/demo-run.jsonl'), delayMs: 25 }];
    case 'paced':
      // About 1.5 s: long enough to be cut by a fault, short enough for dozens in a test.
      return [{ transcript: fixturePath('research-run.jsonl'), delayMs: 8 }];
  }
}

/** `run()` options for a scenario: the prompt carries `tag`, so that its processes can be found in /proc. */
export function scenarioRun(scenario: Scenario, tag: string, extra: Partial<RunOptions> = {}): RunOptions {
  return { prompt: `${scenario} [${tag}]`, killGraceMs: 300, ...fakeEvoSci(scenarioSteps(scenario, tag)), ...extra };
}
