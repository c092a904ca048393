// Code that calls run() itself, tested without dependency injection: withFakeRuns puts a stand-in in its place.
import { setTimeout as sleep } from 'node:timers/promises';
import { catchError, filter, lastValueFrom, map, of, switchMap, toArray, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import { run, SpawnError, type EvoEvent } from '../../index.js';
import { summarize, type RunOutcome } from '../../operators/index.js';
import { events as ev, fakeRun, recordedRuns, withFakeRuns } from '../../testing/index.js';

type Ask = { readonly type: 'research/ask'; readonly prompt: string };
type Action =
  | Ask
  | { readonly type: 'research/answered'; readonly prompt: string; readonly outcome: RunOutcome; readonly text: string }
  | { readonly type: 'research/failed'; readonly prompt: string; readonly message: string }
  | { readonly type: 'ui/opened' };

/** An epic as redux-observable writes them: the latest question starts a run, its summary is the answer. */
const researchEpic = (action$: Observable<Action>): Observable<Action> =>
  action$.pipe(
    filter((action): action is Ask => action.type === 'research/ask'),
    switchMap(({ prompt }) =>
      run({ prompt }).pipe(
        summarize(),
        map((s): Action => ({ type: 'research/answered', prompt, outcome: s.outcome, text: s.text })),
        catchError((err: Error) => of<Action>({ type: 'research/failed', prompt, message: err.message })),
      ),
    ),
  );

const ask = (prompt: string): Ask => ({ type: 'research/ask', prompt });

describe('withFakeRuns', () => {
  it('answers an epic’s run() calls with marbles, in virtual time', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const prompts: string[] = [];
    withFakeRuns(
      ({ prompt }) => {
        prompts.push(prompt);
        if (prompt === 'C') return scheduler.createColdObservable<EvoEvent>('-#', undefined, new Error('overloaded'));
        return scheduler.createColdObservable<EvoEvent>('-t-t-d|', {
          t: ev.text(`${prompt} `),
          d: ev.done(`${prompt} ${prompt} `),
        });
      },
      () =>
        scheduler.run(({ hot, expectObservable }) => {
          const action$ = hot<Action>('-a-u-b-------c--', {
            a: ask('A'),
            u: { type: 'ui/opened' },
            b: ask('B'),
            c: ask('C'),
          });
          // A is switched away from by B, which answers at 11 (5 + 6 frames); C fails a frame after it starts.
          expectObservable(researchEpic(action$)).toBe('-----------b--f-', {
            b: { type: 'research/answered', prompt: 'B', outcome: 'completed', text: 'B B ' },
            f: { type: 'research/failed', prompt: 'C', message: 'overloaded' },
          });
        }),
    );
    expect(prompts).toEqual(['A', 'B', 'C']);
  });

  it('starts a fake CLI instead, with each run’s own options: a recorded run end to end', async () => {
    const answers = await withFakeRuns(
      (options) => fakeRun(options.prompt === 'fail' ? recordedRuns.failed : recordedRuns.research),
      () => lastValueFrom(researchEpic(of(ask('survey'), ask('fail'))).pipe(toArray())),
    );
    // switchMap: the first run is dropped when the second question comes, at once.
    expect(answers).toEqual([
      { type: 'research/failed', prompt: 'fail', message: expect.stringContaining('exited with code 1') as string },
    ]);
    const [answer] = await withFakeRuns(fakeRun(recordedRuns.research), () =>
      lastValueFrom(researchEpic(of(ask('survey'))).pipe(toArray())),
    );
    expect(answer).toMatchObject({ type: 'research/answered', outcome: 'completed' });
  });

  it('emits the same events for every run, from an array or an Observable', async () => {
    const events = [ev.text('hi'), ev.done('hi')];
    const outcomes = await withFakeRuns(events, async () => [
      await lastValueFrom(run({ prompt: 'one' }).pipe(summarize())),
      await lastValueFrom(run({ prompt: 'two' }).pipe(summarize())),
    ]);
    expect(outcomes.map((s) => s.response)).toEqual(['hi', 'hi']);
  });

  it('still checks the options, as run() does', () => {
    expect(() => withFakeRuns([], () => run({ prompt: '' }))).toThrow(TypeError);
  });

  it('holds for each of several tests at once, across awaits, and for nothing after', async () => {
    const answer = (text: string) => [ev.text(text), ev.done(text)];
    const inScope = (text: string, wait: number) =>
      withFakeRuns(answer(text), async () => {
        await sleep(wait);
        const first = await lastValueFrom(run({ prompt: 'p' }).pipe(summarize()));
        await sleep(wait);
        const second = await lastValueFrom(run({ prompt: 'p' }).pipe(summarize()));
        return [first.response, second.response];
      });
    expect(await Promise.all([inScope('a', 20), inScope('b', 5), inScope('c', 10)])).toEqual([
      ['a', 'a'],
      ['b', 'b'],
      ['c', 'c'],
    ]);
    // Out of every scope, run() starts the real CLI again.
    await expect(lastValueFrom(run({ prompt: 'p', command: '/nonexistent/EvoSci' }))).rejects.toBeInstanceOf(
      SpawnError,
    );
  });

  it('lets a stand-in call run() itself, for a real process, rather than itself', async () => {
    const summary = await withFakeRuns(
      (options) => run({ ...options, ...fakeRun(recordedRuns.needsInput) }),
      () => lastValueFrom(run({ prompt: 'Survey sparse attention' }).pipe(summarize())),
    );
    expect(summary.outcome).toBe('needs-input');
  });
});
