import { config, lastValueFrom, toArray, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { run, SpawnError, TimeoutError, type EvoEvent, type ExitInfo, type RunOptions } from '../../index.js';
import { runIn, systemEnvironment } from '../../src/process/run.js';
import { fakeEvoSci, type FakeStep } from '../../testing/fakeEvoSci.js';
import { ManualClock } from '../support/manualClock.js';
import { gone, isAlive, readWhenWritten, scratch } from '../support/processes.js';

const line = (event: object) => JSON.stringify(event);
const text = (content: string) => line({ type: 'text', content });
const done = line({ type: 'done', content: 'ok', response: 'ok' });

function fake(steps: FakeStep[], options: Partial<RunOptions> = {}): RunOptions {
  const { command, env } = fakeEvoSci(steps);
  return { prompt: 'test', command, ...options, env: { ...env, ...options.env } };
}

/** `onExit` as a promise, and the options that feed it. */
function exitOf(options: RunOptions): { options: RunOptions; exit: Promise<ExitInfo> } {
  let resolve: (info: ExitInfo) => void = () => undefined;
  const exit = new Promise<ExitInfo>((r) => (resolve = r));
  return { options: { ...options, onExit: resolve }, exit };
}

/** A real run on a clock the test moves: its timers fire when the test has seen what it waits for. */
function clocked(options: RunOptions): { clock: ManualClock; run$: Observable<EvoEvent> } {
  const clock = new ManualClock();
  return { clock, run$: runIn({ ...systemEnvironment, clock }, options) as Observable<EvoEvent> };
}

/** Subscribes, calls `atFirst` on the first event, and resolves with the error the run ends with. */
function errorAfterFirst(run$: Observable<EvoEvent>, atFirst: () => void): Promise<unknown> {
  let first = true;
  return new Promise((resolve, reject) =>
    run$.subscribe({
      next: () => {
        if (first) atFirst();
        first = false;
      },
      error: resolve,
      complete: () => reject(new Error('the run completed')),
    }),
  );
}

const pidOf = async (record: string) => (JSON.parse(await readWhenWritten(record)) as { pid: number }).pid;

describe('run: the end of a run as EvoScientist 0.2.x ends it', () => {
  const path = scratch();
  let seq = 0;
  const file = (name: string) => path(`${seq++}-${name}`);

  it('completes as soon as done is read, while the process saves its memory; stops it after lingerMs', async () => {
    const record = file('pid.json');
    const { options, exit } = exitOf(
      fake([{ record }, { lines: [text('a'), done] }, { sleep: 60_000 }], { lingerMs: 800 }),
    );
    const { clock, run$ } = clocked(options);
    const events = await lastValueFrom(run$.pipe(toArray()));
    expect(events.map((e) => e.type)).toEqual(['text', 'done']);
    const pid = await pidOf(record);
    expect(isAlive(pid)).toBe(true);
    clock.advance(799);
    expect(isAlive(pid)).toBe(true);
    clock.advance(1);
    expect(await exit).toMatchObject({ done: true, signal: 'SIGINT', durationMs: 800 });
    expect(await gone(pid)).toBe(true);
  });

  it('reports through onExit a non-zero exit and the thread id that come after done', async () => {
    const { options, exit } = exitOf(
      fake([{ lines: [done] }, { sleep: 200 }, { resumeHint: '4e1f9a2b' }, { exit: 3 }]),
    );
    await lastValueFrom(run(options));
    expect(await exit).toMatchObject({ exitCode: 3, threadId: '4e1f9a2b', done: true });
  });

  it('stops a CLI that handles SIGINT with SIGINT alone, and errors as soon as it exits, with its thread id', async () => {
    const record = file('pid.json');
    const { clock, run$ } = clocked(
      fake(
        [
          { handleSigint: { resumeHint: 'ab12cd34', delayMs: 150 } },
          { record },
          { lines: [text('a')] },
          { hang: true },
        ],
        { timeoutMs: 300, killGraceMs: 5000 },
      ),
    );
    // The first event comes after the CLI has set its SIGINT handler.
    const error = await errorAfterFirst(run$, () => clock.advance(300));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ threadId: 'ab12cd34', exitCode: 130 });
    expect((error as Error).message).toMatch(/timed out after 300 ms \(stopped with SIGINT; exited with code 130\)/);
    // The clock never reached the second signal: the error came from the exit, not from a timer.
    expect(clock.now()).toBe(300);
    expect(await gone(await pidOf(record))).toBe(true);
  });

  it('escalates to SIGTERM for a CLI that ignores SIGINT, and says so', async () => {
    const { clock, run$ } = clocked(
      fake([{ ignoreSigint: true }, { lines: [text('a')] }, { hang: true }], { timeoutMs: 200, killGraceMs: 300 }),
    );
    const error = await errorAfterFirst(run$, () => {
      clock.advance(200);
      clock.advance(300);
    });
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ signal: 'SIGTERM' });
    expect((error as Error).message).toMatch(/stopped with SIGINT, then SIGTERM; killed by SIGTERM/);
  });

  it('refuses a prompt too long for one argument before spawning, naming the prompt and the limit', async () => {
    const spawned: number[] = [];
    const error = await lastValueFrom(
      run(fake([{ lines: [done] }], { prompt: 'é'.repeat(100_000), onSpawn: (pid) => spawned.push(pid) })),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as Error).message).toMatch(/the prompt is 200000 bytes of UTF-8.*at most 131071 on Linux/);
    expect(spawned).toEqual([]);
  });

  describe('an onExit that throws after the run completed at done', () => {
    const saved = config.onUnhandledError;
    afterEach(() => {
      config.onUnhandledError = saved;
    });

    it('is reported as RxJS reports errors it cannot deliver, not lost', async () => {
      const reported: unknown[] = [];
      let handled: () => void = () => undefined;
      const seen = new Promise<void>((r) => (handled = r));
      config.onUnhandledError = (err) => {
        reported.push(err);
        handled();
      };
      const thrown = new Error('onExit failed');
      await lastValueFrom(
        run(
          fake([{ lines: [done] }], {
            onExit: () => {
              throw thrown;
            },
          }),
        ),
      );
      await seen;
      expect(reported).toEqual([thrown]);
    });
  });
});
