import { readFileSync } from 'node:fs';
import { concatMap, from, lastValueFrom, map, Subject, tap, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { converse, ExitError, summarize, type ConversationTurn, type EvoEvent } from '../../index.js';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';
import { events as ev } from '../../testing/events.js';
import { gone, readWhenWritten, scratch } from '../support/processes.js';

const line = (event: EvoEvent) => JSON.stringify(event);

describe('converse', () => {
  const path = scratch();

  it('runs one process per prompt, each resuming the thread the one before printed', async () => {
    const record = path('argv.jsonl');
    const question = ev.askUser('int-1', [{ question: 'Which year?', type: 'text' }], { toolCallId: 'c1' });
    const fake = fakeEvoSci([
      { record, append: true },
      { lines: [line(ev.toolCall('ask_user', {}, { id: 'c1' })), line(question), line(ev.done(''))] },
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

describe('converse: a turn’s events$ ends when the conversation errors', () => {
  const path = scratch();

  /** Each turn's `events$` read on its own, as an app that keeps turns for later would, and how each ended. */
  function endings(turns: ConversationTurn[]): Promise<unknown>[] {
    return turns.map((turn) =>
      lastValueFrom(turn.events$, { defaultValue: undefined }).then(
        () => 'completed',
        (err: unknown) => err,
      ),
    );
  }

  it('errors the turn’s events$ with the conversation when run() refuses the turn at once', async () => {
    const turns: ConversationTurn[] = [];
    const conversation = lastValueFrom(
      from(['']).pipe(
        converse(fakeEvoSci([{ lines: [line(ev.done(''))] }])),
        tap((turn) => turns.push(turn)),
      ),
    ).catch((err: unknown) => err);
    const ended = endings(turns);
    const error = await conversation;
    expect(error).toBeInstanceOf(TypeError);
    expect(turns).toHaveLength(1);
    expect(await Promise.all(ended)).toEqual([error]);
  });

  it('errors the turn in progress when the prompts error, and stops its process', async () => {
    const record = path('argv-prompts-error.json');
    const prompts = new Subject<string>();
    const turns: ConversationTurn[] = [];
    const conversation = lastValueFrom(
      prompts.pipe(
        converse(fakeEvoSci([{ record }, { hang: true }])),
        tap((turn) => turns.push(turn)),
      ),
    ).catch((err: unknown) => err);
    prompts.next('one');
    const ended = endings(turns);
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    const stop = new Error('no more prompts');
    prompts.error(stop);
    expect(await conversation).toBe(stop);
    expect(await Promise.all(ended)).toEqual([stop]);
    expect(await gone(pid)).toBe(true);
  });
});
