import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  catchError,
  EMPTY,
  firstValueFrom,
  mergeMap,
  range,
  take,
  tap,
  takeUntil,
  lastValueFrom,
  toArray,
  Subject,
  switchMap,
  type Observable,
} from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CancelledError,
  DecodeError,
  EvoSciError,
  ExitError,
  fromJsonl,
  run,
  SpawnError,
  TimeoutError,
  TruncatedStreamError,
  type DecodeIssue,
  type EvoEvent,
  type ExitInfo,
  type RunOptions,
} from '../../index.js';
import { runIn, systemEnvironment } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';
import type { FakeStep } from '../../testing/fakeEvoSci.js';
import { ManualClock } from '../support/manualClock.js';
import { collect, fixtureBytes, fixturePath, fixtureTruth } from '../support/collect.js';
import { eventually, gone, isAlive, readWhenWritten, reaped, runHandles, scratch } from '../support/processes.js';

const research = fixturePath('research-run.jsonl');
const line = (event: object) => JSON.stringify(event);
const text = (content: string) => line({ type: 'text', content });
const done = line({ type: 'done', content: 'ok', response: 'ok' });

function fake(steps: FakeStep[], options: Partial<RunOptions> = {}): RunOptions {
  const { command, env } = fakeEvoSci(steps);
  return { prompt: 'test', command, ...options, env: { ...env, ...options.env } };
}

/** Runs to the end of the Observable and of the process; resolves with the events, the error if any, and the exit. */
async function outcome(
  options: RunOptions,
  clock?: ManualClock,
): Promise<{ events: EvoEvent[]; error: unknown; exit: ExitInfo | undefined }> {
  const events: EvoEvent[] = [];
  let exit: ExitInfo | undefined;
  let exited: () => void = () => undefined;
  const exitSeen = new Promise<void>((resolve) => (exited = resolve));
  let started = false;
  const start = (o: RunOptions) =>
    clock ? (runIn({ ...systemEnvironment, clock }, o) as Observable<EvoEvent>) : run(o);
  const error = await start({
    ...options,
    onSpawn: (pid) => {
      started = true;
      options.onSpawn?.(pid);
    },
    onExit: (info) => {
      exit = info;
      exited();
      options.onExit?.(info);
    },
  })
    .forEach((e) => events.push(e))
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  if (started) await exitSeen;
  return { events, error, exit };
}

describe('run', () => {
  const path = scratch();
  let seq = 0;
  const file = (name: string) => path(`${seq++}-${name}`);

  it('streams every event of a replayed transcript and completes after done and exit 0', async () => {
    const stderrLines: string[] = [];
    let exit: ExitInfo | undefined;
    let spawned: number | undefined;
    const record = file('pid.json');
    const { events, error } = await outcome(
      fake(
        [
          { stderr: '\u001b[1mLoading agent…\u001b[0m' },
          { record },
          { transcript: research },
          { resumeHint: 'th-4e1f' },
        ],
        {
          onStderr: (l) => stderrLines.push(l),
          onSpawn: (pid) => (spawned = pid),
          onExit: (info) => (exit = info),
        },
      ),
    );
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    expect(spawned).toBe(pid);
    expect(exit?.pid).toBe(pid);
    expect(error).toBeUndefined();
    expect(events).toEqual(await collect(fromJsonl(fixtureBytes('research-run.jsonl'))));
    expect(stderrLines).toEqual(['Loading agent…', 'Resume this session with:', 'EvoSci --resume th-4e1f']);
    expect(exit).toMatchObject({ exitCode: 0, signal: undefined, threadId: 'th-4e1f', done: true });
    expect(exit!.durationMs).toBeGreaterThan(0);
  });

  it('delivers each event as its line is written, before the process ends', async () => {
    const pidFile = file('record.json');
    const first = await firstValueFrom(run(fake([{ record: pidFile }, { lines: [text('hi')] }, { hang: true }])));
    expect(first).toEqual({ type: 'text', content: 'hi' });
    const { pid } = JSON.parse(await readWhenWritten(pidFile)) as { pid: number };
    expect(await gone(pid)).toBe(true);
  });

  it('passes the prompt and options as exact arguments, no shell, stdin at end of input', async () => {
    const record = file('argv.json');
    const cwd = path('');
    for (const prompt of [
      `it's "quoted" \\ and $(rm -rf ~) and \`whoami\` and $HOME`,
      '--help',
      '-p',
      'line one\nline two\n\ttabbed',
      'naïve 🚀 語',
    ]) {
      await outcome(
        fake([{ record }, { lines: [done] }], {
          prompt,
          workdir: '/tmp/task dir',
          autoMode: false,
          resume: 'th-1',
          args: ['--no-thinking', '-m', 'run'],
          cwd,
          env: { EXTRA_VAR: 'x y' },
        }),
      );
      const seen = JSON.parse(readFileSync(record, 'utf8')) as {
        argv: string[];
        cwd: string;
        stdin: string;
        env: Record<string, string>;
      };
      expect(seen.argv).toEqual([
        `--prompt=${prompt}`,
        '--output-format=stream-json',
        '--workdir=/tmp/task dir',
        '--no-auto-mode',
        '--resume=th-1',
        '--no-thinking',
        '-m',
        'run',
      ]);
      expect(seen.stdin).toBe('eof');
      expect(seen.cwd).toBe(cwd.replace(/\/$/, ''));
      expect(seen.env['EXTRA_VAR']).toBe('x y');
      expect(seen.env['PATH']).toBe(process.env['PATH']);
    }
  });

  it('omits the optional flags by default and uses EVOSCI_BIN when no command is given', async () => {
    const record = file('argv.json');
    const { command, env } = fakeEvoSci([{ record }, { lines: [done] }]);
    process.env['EVOSCI_BIN'] = command;
    try {
      const { error } = await outcome({ prompt: 'p', env });
      expect(error).toBeUndefined();
    } finally {
      delete process.env['EVOSCI_BIN'];
    }
    expect((JSON.parse(readFileSync(record, 'utf8')) as { argv: string[] }).argv).toEqual([
      '--prompt=p',
      '--output-format=stream-json',
    ]);
  });

  it('checks its options when called: a TypeError naming the option, and nothing started', () => {
    const record = file('never.json');
    const base = fake([{ record }, { lines: [done] }]);
    const cases: [Partial<RunOptions>, RegExp][] = [
      [{ prompt: '' }, /prompt/],
      [{ timeoutMs: -1 }, /timeoutMs/],
      [{ timeoutMs: Number.NaN }, /timeoutMs/],
      [{ killGraceMs: Number.NaN }, /killGraceMs/],
      [{ killGraceMs: -5 }, /killGraceMs/],
      [{ args: ['--ok', 7 as unknown as string] }, /args/],
      [{ maxLineBytes: Number.NaN }, /maxLineBytes/],
      [{ stderrTailChars: 0 }, /stderrTailChars/],
      [{ stderrTailBytes: 0 }, /stderrTailBytes/],
    ];
    for (const [bad, message] of cases) {
      expect(() => run({ ...base, ...bad })).toThrow(TypeError);
      expect(() => run({ ...base, ...bad })).toThrow(message);
    }
    expect(() => fromJsonl('', { maxLineBytes: -1 })).toThrow(/maxLineBytes/);
    expect(() => readFileSync(record)).toThrow();
  });

  it('is cold: nothing starts before subscription, and each subscription is a process', async () => {
    const records = [file('a.json'), file('b.json')];
    const spawned: number[] = [];
    const run$ = run(fake([{ record: records[0]! }, { lines: [done] }], { onSpawn: (pid) => spawned.push(pid) }));
    // A spawn is synchronous: a process started by run() would have been reported by now.
    expect(spawned).toEqual([]);
    await collect(run$);
    expect(spawned).toHaveLength(1);
    const firstPid = (JSON.parse(readFileSync(records[0]!, 'utf8')) as { pid: number }).pid;
    await collect(run$);
    const secondPid = (JSON.parse(readFileSync(records[0]!, 'utf8')) as { pid: number }).pid;
    expect(secondPid).not.toBe(firstPid);
  });

  it('reports a line cut by a crash without emitting it, then errors with ExitError and the signal', async () => {
    const issues: DecodeIssue[] = [];
    const { events, error } = await outcome(
      fake(
        [
          { transcript: research, count: 5 },
          { stderr: 'Traceback (most recent call last):' },
          { stdout: '{"type": "text", "con' },
          { kill: 'SIGKILL' },
        ],
        {
          onDiagnostic: (i) => issues.push(i),
        },
      ),
    );
    expect(events).toHaveLength(5);
    expect(issues.map((i) => [i.line, i.raw])).toEqual([[6, '{"type": "text", "con']]);
    expect(error).toBeInstanceOf(ExitError);
    expect(error).toMatchObject({ signal: 'SIGKILL', exitCode: undefined });
    expect((error as ExitError).message).toMatch(/killed by SIGKILL[\s\S]*Traceback/);
  });

  it('delivers an error event, then errors with ExitError naming it, the exit code and the stderr tail', async () => {
    const { events, error } = await outcome(
      fake([
        { lines: [text('a'), line({ type: 'error', message: 'rate limited' })] },
        { stderr: 'RuntimeError: 429' },
        { exit: 3 },
      ]),
    );
    expect(events.map((e) => e.type)).toEqual(['text', 'error']);
    expect(error).toBeInstanceOf(ExitError);
    expect(error).toMatchObject({ exitCode: 3, stderrTail: 'RuntimeError: 429' });
    expect((error as Error).message).toMatch(/exited with code 3: rate limited[\s\S]*RuntimeError: 429/);
  });

  it('errors with TruncatedStreamError on exit 0 without done', async () => {
    const { events, error } = await outcome(fake([{ lines: [text('a')] }, { resumeHint: 'th-9' }]));
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(TruncatedStreamError);
    expect(error).toMatchObject({ exitCode: 0, threadId: 'th-9' });
  });

  it('errors with ExitError when killed by a signal from outside', async () => {
    const record = file('pid.json');
    const result = outcome(fake([{ lines: [text('a')] }, { record }, { hang: true }]));
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    process.kill(pid, 'SIGTERM');
    const { events, error } = await result;
    expect(events).toHaveLength(1);
    expect(error).toMatchObject({ name: 'ExitError', signal: 'SIGTERM' });
  });

  it('kills a child that ignores SIGINT and SIGTERM with SIGKILL, killGraceMs apart, when unsubscribed', async () => {
    const clock = new ManualClock();
    let exited: (info: ExitInfo) => void = () => undefined;
    const exit = new Promise<ExitInfo>((resolve) => (exited = resolve));
    const options = fake([{ ignoreSigint: true }, { ignoreSigterm: true }, { lines: [text('a')] }, { hang: true }], {
      killGraceMs: 1000,
      onExit: exited,
    });
    // The first event comes after the CLI has set its handlers; unsubscribing then sends SIGINT.
    const first = await firstValueFrom(runIn({ ...systemEnvironment, clock }, options));
    expect(first.type).toBe('text');
    clock.advance(1000);
    clock.advance(1000);
    // Killed by the third signal: the first two were taken and ignored.
    expect(await exit).toMatchObject({ signal: 'SIGKILL', durationMs: 2000 });
  });

  it.each([false, true])('kills the processes the CLI started (ignoring SIGTERM: %s)', async (stubborn) => {
    const pidFile = file('grandchild.pid');
    const run$ = run(
      fake([{ grandchild: pidFile, ignoreSigterm: stubborn }, { lines: [text('a')] }, { hang: true }], {
        killGraceMs: 300,
      }),
    );
    await firstValueFrom(run$);
    const grandchild = Number(await readWhenWritten(pidFile));
    expect(await gone(grandchild)).toBe(true);
  });

  it('kills what the CLI left running when it exits on its own', async () => {
    const pidFile = file('grandchild.pid');
    const { error } = await outcome(fake([{ grandchild: pidFile }, { lines: [done] }]));
    expect(error).toBeUndefined();
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('ends when the CLI exits, even if a process it left behind holds its output open', async () => {
    const pidFile = file('grandchild.pid');
    const { events, error } = await outcome(fake([{ grandchild: pidFile, inheritOutput: true }, { lines: [done] }]));
    expect(error).toBeUndefined();
    expect(events).toEqual([JSON.parse(done)]);
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('still times out when the CLI has exited but a process in a session of its own holds the output', async () => {
    const pidFile = file('escaped.pid');
    try {
      const clock = new ManualClock();
      const record = file('pid.json');
      const result = outcome(
        fake([{ record }, { grandchild: pidFile, inheritOutput: true, ownSession: true }, { lines: [text('a')] }], {
          timeoutMs: 500,
        }),
        clock,
      );
      // The CLI is gone, and the run has seen it go; the process it left in a session of its own still holds the output.
      expect(await reaped((JSON.parse(await readWhenWritten(record)) as { pid: number }).pid)).toBe(true);
      clock.advance(500);
      const { events, error } = await result;
      expect(events).toHaveLength(1);
      expect(error).toBeInstanceOf(TimeoutError);
    } finally {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    }
  });

  it('ends killGraceMs after the CLI exits even if a process in a session of its own holds the output', async () => {
    const pidFile = file('escaped.pid');
    try {
      const clock = new ManualClock();
      const record = file('pid.json');
      const result = outcome(
        fake(
          [{ record }, { grandchild: pidFile, inheritOutput: true, ownSession: true }, { lines: [text('a'), done] }],
          { killGraceMs: 300 },
        ),
        clock,
      );
      expect(await reaped((JSON.parse(await readWhenWritten(record)) as { pid: number }).pid)).toBe(true);
      clock.advance(300);
      const { events, error } = await result;
      expect(error).toBeUndefined();
      expect(events.map((e) => e.type)).toEqual(['text', 'done']);
    } finally {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    }
  });

  it('stops the process when onSpawn throws, and errors with what it threw', async () => {
    const thrown = new Error('spawn hook failed');
    let spawned = 0;
    const { error } = await outcome(
      fake([{ hang: true }], {
        killGraceMs: 200,
        onSpawn: (pid) => {
          spawned = pid;
          throw thrown;
        },
      }),
    );
    expect(error).toBe(thrown);
    expect(spawned).toBeGreaterThan(0);
    expect(isAlive(spawned)).toBe(false);
  });

  it('errors with what an app callback threw, instead of hanging', async () => {
    const thrown = new Error('onExit failed');
    const { error } = await outcome(
      fake([{ lines: [text('a')] }, { exit: 1 }], {
        onExit: () => {
          throw thrown;
        },
      }),
    );
    expect(error).toBe(thrown);
  });

  it('stops the run with what onStderr threw while the run was streaming', async () => {
    const record = file('pid.json');
    const thrown = new Error('log sink full');
    const { error } = await outcome(
      fake([{ record }, { stderr: 'hello' }, { hang: true }], {
        killGraceMs: 200,
        onStderr: () => {
          throw thrown;
        },
      }),
    );
    expect(error).toBe(thrown);
    expect(await gone((JSON.parse(await readWhenWritten(record)) as { pid: number }).pid)).toBe(true);
  });

  it('reports a crash as ExitError in strict mode too: the cut line is its symptom', async () => {
    const issues: DecodeIssue[] = [];
    const { events, error } = await outcome(
      fake([{ lines: [text('a')] }, { stdout: '{"type": "te' }, { kill: 'SIGKILL' }], {
        strict: true,
        onDiagnostic: (i) => issues.push(i),
      }),
    );
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(ExitError);
    expect(error).toMatchObject({ signal: 'SIGKILL' });
    expect(issues.map((i) => i.line)).toEqual([2]);
  });

  it('errors with SpawnError for input the process cannot be given', async () => {
    const { error } = await outcome(fake([{ lines: [done] }], { prompt: 'nul \u0000 byte' }));
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as Error).message).toMatch(/null bytes/);
  });

  it('stops with TimeoutError after timeoutMs, with the stderr so far', async () => {
    const record = file('pid.json');
    const clock = new ManualClock();
    // The timeout fires once the CLI has written its stderr line.
    const { events, error } = await outcome(
      fake([{ record }, { lines: [text('a')] }, { stderr: 'thinking hard' }, { hang: true }], {
        timeoutMs: 400,
        onStderr: () => clock.advance(400),
      }),
      clock,
    );
    expect(events).toHaveLength(1);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).stderrTail).toBe('thinking hard');
    expect(await gone((JSON.parse(await readWhenWritten(record)) as { pid: number }).pid)).toBe(true);
  });

  it('stops with CancelledError when the signal aborts, and does not start when already aborted', async () => {
    const controller = new AbortController();
    const record = file('pid.json');
    const result = outcome(fake([{ record }, { lines: [text('a')] }, { hang: true }], { signal: controller.signal }));
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    controller.abort(new Error('user pressed stop'));
    const { error } = await result;
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).cause).toEqual(new Error('user pressed stop'));
    expect(isAlive(pid)).toBe(false);

    const spawned: number[] = [];
    const aborted = await outcome(
      fake([{ lines: [done] }], { signal: AbortSignal.abort(), onSpawn: (p) => spawned.push(p) }),
    );
    expect(aborted.error).toBeInstanceOf(CancelledError);
    expect(spawned).toEqual([]);
  });

  it('drains 10 MB of stderr without blocking and keeps a bounded tail', async () => {
    let count = 0;
    let last = '';
    const { events, error } = await outcome(
      fake([{ stderrBytes: 10 * 1024 * 1024 }, { transcript: research }, { stderr: 'last words' }], {
        onStderr: (l) => {
          count++;
          last = l;
        },
      }),
    );
    expect(error).toBeUndefined();
    expect(events).toHaveLength(fixtureTruth<{ events: number }>('research-run.jsonl').events);
    // 100-byte filler lines; the unfinished last one runs into 'last words'.
    expect(count).toBe(Math.floor((10 * 1024 * 1024) / 100) + 1);
    expect(last).toMatch(/^E+last words$/);
  });

  it('keeps at most stderrTailChars of stderr for errors (stderrTailBytes, its old name, too)', async () => {
    for (const limit of [{ stderrTailChars: 4096 }, { stderrTailBytes: 4096 }]) {
      const { error } = await outcome(fake([{ stderrBytes: 1024 * 1024 }, { stderr: 'the end' }, { exit: 1 }], limit));
      const tail = (error as ExitError).stderrTail;
      expect(tail.length).toBeLessThanOrEqual(4096);
      expect(tail.length).toBeGreaterThan(4000);
      expect(tail.endsWith('the end')).toBe(true);
    }
  });

  it.each([
    ['a missing binary', { command: '/nonexistent/EvoSci' }],
    ['a file that is not executable', { command: fileURLToPath(import.meta.url) }],
    ['a missing cwd', { command: process.execPath, cwd: '/nonexistent/dir' }],
  ])('errors promptly with SpawnError for %s', async (_label, options) => {
    const started = Date.now();
    const { events, error } = await outcome({ prompt: 'x', ...options });
    expect(events).toEqual([]);
    expect(error).toBeInstanceOf(SpawnError);
    expect(error).toBeInstanceOf(EvoSciError);
    expect((error as Error).message).toMatch(/could not start/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('errors with DecodeError in strict mode and stops the process', async () => {
    const record = file('pid.json');
    const { events, error } = await outcome(
      fake([{ record }, { lines: [text('a'), '{"type": "text"}', text('b')] }, { hang: true }], {
        strict: true,
        killGraceMs: 200,
      }),
    );
    expect(events).toEqual([{ type: 'text', content: 'a' }]);
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as DecodeError).issue.line).toBe(2);
    expect(await gone((JSON.parse(await readWhenWritten(record)) as { pid: number }).pid)).toBe(true);
  });

  it('stops the replaced run in switchMap and the one cut by takeUntil', async () => {
    const records = [file('a.json'), file('b.json')];
    const next$ = new Subject<number>();
    const stop$ = new Subject<void>();
    const seen: string[] = [];
    const done$ = lastValueFrom(
      next$.pipe(
        switchMap((i) => run(fake([{ record: records[i]! }, { lines: [text(`run ${i}`)] }, { hang: true }]))),
        tap((e) => {
          seen.push((e as { content: string }).content);
          if (seen.length === 2) stop$.next();
        }),
        takeUntil(stop$),
        toArray(),
      ),
    );
    next$.next(0);
    const first = JSON.parse(await readWhenWritten(records[0]!)) as { pid: number };
    expect(await eventually(() => seen.length > 0)).toBe(true);
    next$.next(1);
    expect(await gone(first.pid)).toBe(true);
    const second = JSON.parse(await readWhenWritten(records[1]!)) as { pid: number };
    await done$;
    expect(await gone(second.pid)).toBe(true);
    expect(seen).toEqual(['run 0', 'run 1']);
  });

  it('leaves no process, handle or listener behind after 50 runs with bounded concurrency and cancellation', async () => {
    const handlesBefore = runHandles().length;
    const hooks = (): unknown[] => [
      ...process.listeners('exit'),
      ...(['SIGINT', 'SIGTERM', 'SIGHUP'] as const).flatMap((signal) => process.listeners(signal)),
    ];
    const hooksBefore = hooks();
    const pids: number[] = [];
    const records: string[] = [];
    await lastValueFrom(
      range(0, 50).pipe(
        mergeMap((i) => {
          const record = file(`soak-${i}.json`);
          records.push(record);
          const steps: FakeStep[] = [{ record }, { lines: [text('a'), text('b')], delayMs: 5 }];
          const run$ = run(
            fake(i % 3 === 0 ? [...steps, { hang: true }] : [...steps, { lines: [done] }], { killGraceMs: 200 }),
          );
          return (i % 3 === 0 ? run$.pipe(take(1)) : run$).pipe(catchError(() => EMPTY));
        }, 8),
        toArray(),
      ),
    );
    for (const record of records) pids.push((JSON.parse(readFileSync(record, 'utf8')) as { pid: number }).pid);
    for (const pid of pids) expect(await gone(pid)).toBe(true);
    expect(await eventually(() => runHandles().length <= handlesBefore)).toBe(true);
    // A group's hooks go when Node has seen its process exit, which `gone` (true for a zombie) does not wait for.
    const added = (): unknown[] => hooks().filter((listener) => !hooksBefore.includes(listener));
    await eventually(() => added().length === 0);
    expect(added()).toEqual([]);
  });

  it('kills its runs when the Node process exits', () => {
    const pidFile = file('grandchild.pid');
    const { command, env } = fakeEvoSci([{ grandchild: pidFile }, { lines: [text('a')] }, { hang: true }]);
    const script = `
      import { run } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};
      run({ prompt: 'x', command: ${JSON.stringify(command)}, env: ${JSON.stringify(env)} })
        .subscribe(() => process.exit(0));
    `;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 });
    expect(result.status).toBe(0);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    return gone(grandchild).then((dead) => expect(dead).toBe(true));
  });
});

afterEach(() => {
  delete process.env['EVOSCI_BIN'];
});

describe('run and the app’s own signal handling', () => {
  it('leaves a Ctrl-C the app handles to the app: it can stop its runs and exit normally', async () => {
    const path = scratch();
    const pidFile = path('grandchild.pid');
    const { command, env } = fakeEvoSci([{ grandchild: pidFile }, { lines: [text('a')] }, { hang: true }]);
    const script = `
      import { fromEvent, takeUntil } from 'rxjs';
      import { run } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};
      run({ prompt: 'x', command: ${JSON.stringify(command)}, env: ${JSON.stringify(env)}, killGraceMs: 300 })
        .pipe(takeUntil(fromEvent(process, 'SIGINT')))
        .subscribe({ next: () => process.stdout.write('started\\n'), complete: () => process.stdout.write('stopped\\n') });
    `;
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out === 'started\n') child.kill('SIGINT');
    });
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.on('close', (c, s) => resolve([c, s])),
    );
    expect([code, signal]).toEqual([0, null]);
    expect(out).toBe('started\nstopped\n');
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('kills its runs when the app dies of a signal it does not handle', async () => {
    const path = scratch();
    const pidFile = path('grandchild.pid');
    const { command, env } = fakeEvoSci([{ grandchild: pidFile }, { lines: [text('a')] }, { hang: true }]);
    const script = `
      import { run } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};
      run({ prompt: 'x', command: ${JSON.stringify(command)}, env: ${JSON.stringify(env)} })
        .subscribe(() => process.stdout.write('started\\n'));
    `;
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
    child.stdout.once('data', () => child.kill('SIGTERM'));
    const signal = await new Promise((resolve) => child.on('close', (_c, s) => resolve(s)));
    expect(signal).toBe('SIGTERM');
    expect(await gone(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });
});
