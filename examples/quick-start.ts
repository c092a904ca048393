// The README's quick start, kept here so that it is type-checked and tested:
// one EvoSci run shared by three views of it. Without EvoSci (or $EVOSCI_BIN)
// the first import points run() at the fake CLI, and says so.
//
//   npx tsx examples/quick-start.ts
//
import './fakeWhenMissing.js';
import { connect, ignoreElements, lastValueFrom, merge, tap } from 'rxjs';
import { run } from 'evosci-rx';
import { ofType, pairToolCalls, summarize } from 'evosci-rx/operators';

const run$ = run({ prompt: 'Summarize the attention mechanism into notes.md', workdir: './task' });
const summary = await lastValueFrom(
  run$.pipe(
    // One process shared by three views of it: a run is cold, each subscription starts one.
    connect((events$) =>
      merge(
        events$.pipe(
          ofType('text'),
          tap((e) => process.stdout.write(e.content)),
          ignoreElements(),
        ),
        events$.pipe(
          pairToolCalls(),
          tap((tool) => console.log(tool.status, tool.name)),
          ignoreElements(),
        ),
        events$.pipe(summarize()),
      ),
    ),
  ),
);
console.log(`\n${summary.outcome}: ${summary.usage.totalTokens} main-agent tokens`);
