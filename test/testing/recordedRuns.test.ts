// The recorded runs `evosci-rx/testing` ships, replayed through the fake CLI by `fakeRun`.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { catchError, EMPTY, lastValueFrom, tap, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ExitError, fromJsonlFile, run, type EvoEvent, type ExitInfo, type RunOptions } from '../../index.js';
import { summarize } from '../../operators/index.js';
import { fakeRun, recordedRuns, type FakeRunOptions } from '../../testing/index.js';
import { SHIPPED_RUNS } from '../fixtures/generate.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** One run of the fake: its events, how it ended, how it exited. */
async function replayed(
  transcript: string,
  options: FakeRunOptions = {},
  more: Partial<RunOptions> = {},
): Promise<{ events: EvoEvent[]; error: unknown; exit: ExitInfo }> {
  let exited: (info: ExitInfo) => void = () => undefined;
  const exit = new Promise<ExitInfo>((resolve) => (exited = resolve));
  const events: EvoEvent[] = [];
  let error: unknown;
  const run$: Observable<EvoEvent> = run({ ...fakeRun(transcript, options), ...more, onExit: exited });
  await lastValueFrom(run$.pipe(tap((event) => events.push(event))), { defaultValue: undefined }).catch(
    (err: unknown) => (error = err),
  );
  return { events, error, exit: await exit };
}

const eventsOf = (file: string) => lastValueFrom(fromJsonlFile(file).pipe(toArray()));

describe('recordedRuns', () => {
  it('are the shipped copies of the fixtures, byte for byte, and nothing else', () => {
    for (const [shipped, fixture] of Object.entries(SHIPPED_RUNS)) {
      expect(readFileSync(join(root, shipped)), shipped).toEqual(readFileSync(join(root, fixture)));
    }
    const paths = Object.values(recordedRuns);
    expect(paths.map((p) => p.slice(root.length)).sort()).toEqual(Object.keys(SHIPPED_RUNS).sort());
    const dir = dirname(paths[0]!);
    expect(
      readdirSync(dir)
        .map((f) => join(dir, f))
        .sort(),
    ).toEqual([...paths].sort());
  });

  it('ship in the package, where the built module finds them', async () => {
    const [pack] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }),
    ) as { files: { path: string }[] }[];
    const shipped = pack!.files.map((f) => f.path).filter((path) => path.startsWith('dist/testing/runs/'));
    expect(shipped.sort()).toEqual(
      Object.keys(SHIPPED_RUNS)
        .map((path) => `dist/${path}`)
        .sort(),
    );
    const built = (await import('evosci-rx/testing')) as { recordedRuns: Record<string, string> };
    for (const path of Object.values(built.recordedRuns)) expect(existsSync(path), path).toBe(true);
  });

  it.each([
    ['research', 'completed'],
    ['needsInput', 'needs-input'],
    ['needsApproval', 'needs-input'],
    ['resumed', 'completed'],
    ['failed', 'failed'],
  ] as const)('%s ends %s', async (name, outcome) => {
    const summary = await lastValueFrom(fromJsonlFile(recordedRuns[name]).pipe(summarize()));
    expect(summary.outcome).toBe(outcome);
  });
});

describe('fakeRun', () => {
  it('replays a transcript through a real process that exits as EvoSci does after done', async () => {
    const { events, error, exit } = await replayed(recordedRuns.research);
    expect(error).toBeUndefined();
    expect(events).toEqual(await eventsOf(recordedRuns.research));
    expect(exit).toMatchObject({ exitCode: 0, threadId: '4e1f9a2b', done: true });
  });

  it('ends a run without done as EvoSci does: exit 1, after every event, with the resume hint', async () => {
    const { events, error, exit } = await replayed(recordedRuns.failed);
    expect(error).toBeInstanceOf(ExitError);
    expect(error).toMatchObject({ exitCode: 1, threadId: '4e1f9a2b' });
    expect(events).toEqual(await eventsOf(recordedRuns.failed));
    const summary = await lastValueFrom(
      run(fakeRun(recordedRuns.failed)).pipe(
        catchError(() => EMPTY),
        summarize(),
      ),
    );
    expect(summary.outcome).toBe('failed');
    expect(exit.exitCode).toBe(1);
  });

  it('gives a prompt, a command and env that run() takes as they are', () => {
    const fake = fakeRun(recordedRuns.needsInput, { prompt: 'Survey sparse attention' });
    expect(Object.keys(fake).sort()).toEqual(['command', 'env', 'prompt']);
    expect(fake.prompt).toBe('Survey sparse attention');
    expect(fakeRun(recordedRuns.needsInput).prompt).not.toBe('');
  });

  it('reads a relative transcript path from where it was called, whatever the run’s cwd', () => {
    const { env } = fakeRun('testing/runs/failed.jsonl');
    const script = JSON.parse(env['EVOSCI_FAKE']!) as { steps: { transcript?: string }[] };
    expect(script.steps.find((s) => s.transcript !== undefined)?.transcript).toBe(
      join(process.cwd(), 'testing/runs/failed.jsonl'),
    );
  });

  it('takes the stderr, the resume hint and the exit status it is given', async () => {
    const lines: string[] = [];
    const { error, exit } = await replayed(
      recordedRuns.needsInput,
      { stderr: ['Loading agent...'], resumeHint: false, exitCode: 3 },
      { onStderr: (line) => lines.push(line) },
    );
    expect(error).toBeUndefined();
    expect(lines).toEqual(['Loading agent...']);
    expect(exit).toMatchObject({ exitCode: 3, threadId: undefined, done: true });
  });

  it('replays another transcript for a run with resume', async () => {
    const fake: FakeRunOptions = { onResume: recordedRuns.resumed };
    const first = await replayed(recordedRuns.needsApproval, fake);
    const again = await replayed(recordedRuns.needsApproval, fake, { resume: first.exit.threadId! });
    expect(first.events).toEqual(await eventsOf(recordedRuns.needsApproval));
    expect(again.events).toEqual(await eventsOf(recordedRuns.resumed));
  });
});
