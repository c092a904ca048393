import { config, lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { run, SpawnError, TimeoutError, type ExitInfo, type RunOptions } from '../../index.js';
import { fakeEvoSci, type FakeStep } from '../../testing/fakeEvoSci.js';
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
    const started = Date.now();
    const events = await lastValueFrom(run(options).pipe(toArray()));
    expect(Date.now() - started).toBeLessThan(800);
    expect(events.map((e) => e.type)).toEqual(['text', 'done']);
    const pid = await pidOf(record);
    expect(isAlive(pid)).toBe(true);
    const info = await exit;
    expect(info).toMatchObject({ done: true, signal: 'SIGINT' });
    expect(info.durationMs).toBeGreaterThanOrEqual(800);
    expect(await gone(pid, 3000)).toBe(true);
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
    const started = Date.now();
    const error = await lastValueFrom(
      run(
        fake(
          [
            { handleSigint: { resumeHint: 'ab12cd34', delayMs: 150 } },
            { record },
            { lines: [text('a')] },
            { hang: true },
          ],
          {
            timeoutMs: 300,
            killGraceMs: 5000,
          },
        ),
      ),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ threadId: 'ab12cd34', exitCode: 130 });
    expect((error as Error).message).toMatch(/timed out after 300 ms \(stopped with SIGINT; exited with code 130\)/);
    // Well within the first grace period: the error does not wait for a timer once the CLI is gone.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await gone(await pidOf(record), 1000)).toBe(true);
  });

  it('escalates to SIGTERM for a CLI that ignores SIGINT, and says so', async () => {
    const error = await lastValueFrom(
      run(fake([{ ignoreSigint: true }, { lines: [text('a')] }, { hang: true }], { timeoutMs: 200, killGraceMs: 300 })),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ signal: 'SIGTERM' });
    expect((error as Error).message).toMatch(/stopped with SIGINT, then SIGTERM; killed by SIGTERM/);
  });

  it('refuses a prompt too long for one argument before spawning, naming the prompt and the limit', async () => {
    const record = file('never.json');
    const error = await lastValueFrom(
      run(fake([{ record }, { lines: [done] }], { prompt: 'é'.repeat(100_000) })),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as Error).message).toMatch(/the prompt is 200000 bytes of UTF-8.*at most 131071 on Linux/);
    await expect(readWhenWritten(record, 300)).rejects.toThrow();
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
