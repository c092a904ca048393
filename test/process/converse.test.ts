import { readFileSync } from 'node:fs';
import { concatMap, from, lastValueFrom, map, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { converse, ExitError, summarize, type EvoEvent } from '../../index.js';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';
import { events as ev } from '../../testing/events.js';
import { scratch } from '../support/processes.js';

const line = (event: EvoEvent) => JSON.stringify(event);

describe('converse', () => {
  const path = scratch();

  it('runs one process per prompt, each resuming the thread the one before printed', async () => {
    const record = path('argv.jsonl');
    const question = ev.askUser('int-1', [{ question: 'Which year?', type: 'text' }], 'c1');
    const fake = fakeEvoSci([
      { record, append: true },
      { lines: [line(ev.toolCall('ask_user', {}, 'c1')), line(question), line(ev.done(''))] },
      { sleep: 100 },
      { resumeHint: '7f3a9c1e' },
    ]);
    const turns = await lastValueFrom(
      from(['Summarize the 2019 papers', '2019']).pipe(
        converse({ ...fake, autoMode: false }),
        concatMap((turn) =>
          turn.events$.pipe(
            summarize(),
            map((summary) => ({ index: turn.index, resume: turn.resume, outcome: summary.outcome })),
          ),
        ),
        toArray(),
      ),
    );
    expect(turns).toEqual([
      { index: 0, resume: undefined, outcome: 'needs-input' },
      { index: 1, resume: '7f3a9c1e', outcome: 'needs-input' },
    ]);
    const argvs = readFileSync(record, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { argv: string[] }).argv);
    expect(argvs).toEqual([
      ['--prompt=Summarize the 2019 papers', '--output-format=stream-json', '--no-auto-mode'],
      ['--prompt=2019', '--output-format=stream-json', '--no-auto-mode', '--resume=7f3a9c1e'],
    ]);
  });

  it('errors the conversation with a turn’s error and starts no further turn', async () => {
    const record = path('argv-failing.jsonl');
    const fake = fakeEvoSci([{ record, append: true }, { lines: [line(ev.error('model down'))] }, { exit: 1 }]);
    const error = await lastValueFrom(
      from(['one', 'two']).pipe(
        converse(fake),
        concatMap((turn) => turn.events$),
      ),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ExitError);
    expect(readFileSync(record, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});
