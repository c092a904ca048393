// A hub in a process of its own, for the tests that kill it: opens `runHub`
// on a directory, starts a run of the scenario named (`slow` by default,
// resuming the thread named, if one is), prints its id once the directory
// holds what the test kills it after (a `slow` run's first two events, any
// other's end), and runs until killed.
//
//   node --import tsx test/runs/hubProcess.ts <dir> <runsDir> [scenario] [resume]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { runHub } from '../../src/runs/index.js';
import type { StoredRun } from '../../src/runs/RunStore.js';
import { request, scenarioRunOptions, type Scenario } from './scenarios.js';

const [dir = '', runsDir = '', scenario = 'slow', resume] = process.argv.slice(2) as [
  string,
  string,
  Scenario?,
  string?,
];
const runOptions = scenarioRunOptions(dir);
// The CLI dies with this process, as a server's runs should; one that lingers after `done` may, for a minute.
const hub = await runHub({ dir: runsDir, runOptions: (r) => ({ ...runOptions(r), lifeline: true, lingerMs: 60_000 }) });
const { id } = await hub.start({ ...request(scenario), ...(resume !== undefined && { resume }) });
await firstValueFrom(hub.follow(id, { after: 0 }));
const lines = () => {
  try {
    return readFileSync(join(runsDir, `${id}.jsonl`), 'utf8').split('\n').length - 1;
  } catch {
    return 0; // its file not opened yet
  }
};
const state = () => (JSON.parse(readFileSync(join(runsDir, `${id}.json`), 'utf8')) as StoredRun).status.state;
// Both events are in the run's file, not only in its log; or its end is in its status file.
const stored = () => (scenario === 'slow' ? lines() >= 2 : state() !== 'running');
while (!stored()) await new Promise((resolve) => setTimeout(resolve, 20));
process.stdout.write(`${JSON.stringify({ id })}\n`);
setInterval(() => undefined, 1 << 30);
