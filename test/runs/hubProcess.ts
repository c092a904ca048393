// A hub in a process of its own, for the restart test: opens `runHub` on a
// directory, starts a run that waits to be stopped, prints its id once its
// first events are stored, and runs until killed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { runHub } from '../../src/runs/index.js';
import { request, scenarioRunOptions } from './scenarios.js';

const [dir = '', runsDir = ''] = process.argv.slice(2);
const runOptions = scenarioRunOptions(dir);
// The CLI dies with this process, as a server's runs should.
const hub = await runHub({ dir: runsDir, runOptions: (r) => ({ ...runOptions(r), lifeline: true }) });
const { id } = await hub.start(request('slow'));
await firstValueFrom(hub.follow(id, { after: 0 }));
// Both events are in the run's file, not only in its log.
const lines = () => readFileSync(join(runsDir, `${id}.jsonl`), 'utf8').split('\n').length - 1;
while (lines() < 2) await new Promise((resolve) => setTimeout(resolve, 20));
process.stdout.write(`${JSON.stringify({ id })}\n`);
setInterval(() => undefined, 1 << 30);
