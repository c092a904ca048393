// The README's quick start, kept here so that it is type-checked and tested:
// one EvoSci run shared by three views of it. Without EvoSci (or $EVOSCI_BIN)
// the first import points run() at the fake CLI, and says so.
//
//   npx tsx examples/quick-start.ts
//
import './fakeWhenMissing.js';
import { connect, filter, ignoreElements, lastValueFrom, merge, tap } from 'rxjs';
import { run } from 'evosci-rx';
import { ofType, pairToolCalls, summarize } from 'evosci-rx/operators';

const run$ = run({ prompt: 'Summarize the attention mechanism into notes.md', workdir: './task' });
// Text streams in pieces; each finished tool call gets a line of its own.
let atLineStart = true;
const print = (text: string) => {
  process.stdout.write(text);
  if (text !== '') atLineStart = text.endsWith('\n');
};
const summary = await lastValueFrom(
  run$.pipe(
    // One process shared by three views of it: a run is cold, each subscription starts one.
    connect((events$) =>
      merge(
        events$.pipe(
          ofType('text'),
          tap((e) => print(e.content)),
          ignoreElements(),
        ),
        events$.pipe(
          pairToolCalls(),
          filter((tool) => tool.status !== 'running'),
          tap((tool) => print(`${atLineStart ? '' : '\n'}${tool.status} ${tool.name}\n`)),
          ignoreElements(),
        ),
        events$.pipe(summarize()),
      ),
    ),
  ),
);
print(`${atLineStart ? '' : '\n'}${summary.outcome}: ${summary.usage.totalTokens} main-agent tokens\n`);
