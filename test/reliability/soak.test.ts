import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { catchError, concatMap, EMPTY, lastValueFrom, mergeMap, range, take, timer, takeUntil, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../index.js';
import { fakeEvoSci, type FakeStep } from '../../testing/index.js';
import { fixturePath } from '../support/collect.js';
import { eventually, gone, runHandles, scratch } from '../support/processes.js';

const transcript = fixturePath('research-run.jsonl');
const warnings: Error[] = [];
const rejections: unknown[] = [];
const onWarning = (w: Error) => warnings.push(w);
const onRejection = (r: unknown) => rejections.push(r);

/** One run of the soak: how it is cut short (or not) is drawn at random. */
function soakRun(
  record: string,
  plan: { cancelAfterEvents: number | undefined; cancelAfterMs: number | undefined; crash: boolean },
) {
  const steps: FakeStep[] = [{ record }, { transcript, delayMs: 0, count: 60 }];
  if (plan.crash) steps.push({ stdout: '{"type": "te' }, { kill: 'SIGKILL' });
  else steps.push({ hang: true });
  const { command, env } = fakeEvoSci(steps);
  let run$ = run({ prompt: 'soak', command, env, killGraceMs: 200 });
  if (plan.cancelAfterEvents !== undefined) run$ = run$.pipe(take(plan.cancelAfterEvents));
  run$ = run$.pipe(takeUntil(timer(plan.cancelAfterMs ?? 400)));
  return run$.pipe(catchError(() => EMPTY));
}

const plans = fc.record({
  cancelAfterEvents: fc.option(fc.integer({ min: 1, max: 80 }), { nil: undefined }),
  cancelAfterMs: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
  crash: fc.boolean(),
});

describe('soak', () => {
  beforeAll(() => {
    process.on('warning', onWarning);
    process.on('unhandledRejection', onRejection);
  });
  afterAll(() => {
    process.off('warning', onWarning);
    process.off('unhandledRejection', onRejection);
  });

  it.each([
    ['100 sequential', 100, 1],
    ['50 concurrent', 50, 50],
  ])(
    '%s runs with random cancellation leave no process, handle, warning or rejection behind',
    async (_label, count, concurrency) => {
      const path = scratch();
      const handlesBefore = runHandles().length;
      const drawn = fc.sample(plans, { numRuns: count, seed: count });
      await lastValueFrom(
        range(0, count).pipe(
          mergeMap((i) => soakRun(path(`${i}.json`), drawn[i]!), concurrency),
          toArray(),
        ),
      );
      const pids = await lastValueFrom(
        range(0, count).pipe(
          concatMap(async (i) => {
            try {
              return (JSON.parse(readFileSync(path(`${i}.json`), 'utf8')) as { pid: number }).pid;
            } catch {
              return undefined; // cancelled before the fake wrote its record
            }
          }),
          toArray(),
        ),
      );
      for (const pid of pids) if (pid !== undefined) expect(await gone(pid)).toBe(true);
      expect(await eventually(() => runHandles().length <= handlesBefore)).toBe(true);
      expect(warnings.map((w) => w.name)).toEqual([]);
      expect(rejections).toEqual([]);
    },
    120_000,
  );
});
