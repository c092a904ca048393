// The lifecycle of a run in virtual time: the stop ladder, timeoutMs,
// lingerMs, killGraceMs, unsubscribe and abort, on a virtual CLI that takes
// signals as the real one does. lifecycle.test.ts runs each rung once with a
// real process.
import { catchError, map, of, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { describe, expect, it } from 'vitest';
import type { EvoSciError } from '../../src/events/errors.js';
import { schedulerClock } from '../../src/process/clock.js';
import type { ExitInfo, RunOptions } from '../../src/process/options.js';
import { runIn } from '../../src/process/run.js';
import { StopLadder } from '../../src/process/StopLadder.js';
import { marbles } from '../support/marbles.js';
import { virtualCli, type VirtualScript } from '../support/virtualCli.js';

const text = (content: string) => JSON.stringify({ type: 'text', content });
const done = JSON.stringify({ type: 'done', content: 'ok', response: 'ok' });
const HINT = '\u001b[1;36mEvoSci --resume ab12cd34\u001b[0m';

/** A run's events as their types, and its error as what a user reads of it. */
function outcome$(run$: Observable<{ type: string }>): Observable<unknown> {
  return run$.pipe(
    map((event) => event.type),
    catchError((err: EvoSciError) =>
      of({
        error: err.name,
        message: err.message.split('\n')[0],
        exitCode: err.exitCode,
        signal: err.signal,
        threadId: err.threadId,
      }),
    ),
  );
}

/** Runs `script` on a virtual CLI on the test scheduler's clock. */
function virtualRun(scheduler: TestScheduler, script: VirtualScript, options: Partial<RunOptions> = {}) {
  const { startCli, log } = virtualCli(script);
  const exits: (ExitInfo & { at: number })[] = [];
  const run$ = runIn(
    { clock: schedulerClock(scheduler), startCli },
    { prompt: 'p', killGraceMs: 3000, ...options, onExit: (info) => exits.push({ ...info, at: scheduler.now() }) },
  );
  return { run$, log, exits };
}

describe('the stop ladder', () => {
  it('sends each signal graceMs after the one before, and none once halted', () => {
    const scheduler = marbles();
    scheduler.run(() => {
      const sent: [number, string][] = [];
      const ladder = new StopLadder(['SIGINT', 'SIGTERM', 'SIGKILL'], 100, schedulerClock(scheduler), (signal) =>
        sent.push([scheduler.now(), signal]),
      );
      scheduler.schedule(() => ladder.climb(), 10);
      scheduler.schedule(() => ladder.climb(), 50); // a second stop changes nothing
      scheduler.flush();
      expect(sent).toEqual([
        [10, 'SIGINT'],
        [110, 'SIGTERM'],
        [210, 'SIGKILL'],
      ]);
      expect(ladder.signalsSent).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL']);
    });
  });

  it('stops climbing when the process is gone', () => {
    const scheduler = marbles();
    scheduler.run(() => {
      const sent: string[] = [];
      const ladder = new StopLadder(['SIGINT', 'SIGTERM'], 100, schedulerClock(scheduler), (s) => sent.push(s));
      ladder.climb();
      scheduler.schedule(() => ladder.halt(), 99);
      scheduler.flush();
      ladder.climb();
      expect(sent).toEqual(['SIGINT']);
    });
  });
});

describe('run() in virtual time', () => {
  it('timeoutMs sends SIGINT; the error waits for the exit and carries the thread id the CLI printed', () => {
    const scheduler = marbles();
    const { run$, log } = virtualRun(
      scheduler,
      { stdout: [[0, text('a')]], onSignal: { SIGINT: { exitCode: 130, afterMs: 150, stderr: HINT } } },
      { timeoutMs: 300, killGraceMs: 5000 },
    );
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$)).toBe('a 449ms (e|)', {
        a: 'text',
        e: {
          error: 'TimeoutError',
          message: 'run timed out after 300 ms (stopped with SIGINT; exited with code 130)',
          exitCode: 130,
          signal: undefined,
          threadId: 'ab12cd34',
        },
      });
    });
    expect(log.signals).toEqual([[300, 'SIGINT']]);
  });

  it('escalates to SIGTERM killGraceMs after SIGINT for a CLI that ignores SIGINT', () => {
    const scheduler = marbles();
    const { run$, log } = virtualRun(
      scheduler,
      { stdout: [[0, text('a')]], onSignal: { SIGINT: 'ignore' } },
      { timeoutMs: 200, killGraceMs: 300 },
    );
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$)).toBe('a 499ms (e|)', {
        a: 'text',
        e: {
          error: 'TimeoutError',
          message: 'run timed out after 200 ms (stopped with SIGINT, then SIGTERM; killed by SIGTERM)',
          exitCode: undefined,
          signal: 'SIGTERM',
          threadId: undefined,
        },
      });
    });
    expect(log.signals).toEqual([
      [200, 'SIGINT'],
      [500, 'SIGTERM'],
    ]);
  });

  it('ends with SIGKILL a CLI that ignores SIGINT and SIGTERM, killGraceMs apart', () => {
    const scheduler = marbles();
    const { run$, log } = virtualRun(
      scheduler,
      { onSignal: { SIGINT: 'ignore', SIGTERM: 'ignore' } },
      { timeoutMs: 100, killGraceMs: 1000 },
    );
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$).pipe(map((o) => (o as { message: string }).message))).toBe('2100ms (e|)', {
        e: 'run timed out after 100 ms (stopped with SIGINT, then SIGTERM, then SIGKILL; killed by SIGKILL)',
      });
    });
    expect(log.signals.map(([at]) => at)).toEqual([100, 1100, 2100]);
  });

  it('completes at done and clears timeoutMs; after lingerMs the process is stopped as on unsubscribe', () => {
    const scheduler = marbles();
    const { run$, log, exits } = virtualRun(
      scheduler,
      {
        stdout: [
          [0, text('a')],
          [100, done],
        ],
      },
      { timeoutMs: 500, lingerMs: 2000 },
    );
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$)).toBe('a 99ms (d|)', { a: 'text', d: 'done' });
    });
    expect(log.signals).toEqual([[2100, 'SIGINT']]);
    expect(exits).toEqual([expect.objectContaining({ at: 2100, done: true, signal: 'SIGINT', durationMs: 2100 })]);
  });

  it('sends no signal to a CLI that exits within lingerMs, and reports its exit', () => {
    const scheduler = marbles();
    const { run$, log, exits } = virtualRun(
      scheduler,
      { stdout: [[10, done]], stderr: [[500, HINT]], exit: [600, 0] },
      { lingerMs: 2000 },
    );
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$)).toBe('10ms (d|)', { d: 'done' });
    });
    expect(log.signals).toEqual([]);
    expect(exits).toEqual([expect.objectContaining({ at: 600, exitCode: 0, threadId: 'ab12cd34', done: true })]);
  });

  it('unsubscribing before done climbs the ladder from that moment', () => {
    const scheduler = marbles();
    const { run$, log, exits } = virtualRun(
      scheduler,
      { stdout: [[0, text('a')]], onSignal: { SIGINT: 'ignore' } },
      { killGraceMs: 250 },
    );
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$), '^ 99ms !').toBe('a', { a: 'text' });
    });
    expect(log.signals).toEqual([
      [100, 'SIGINT'],
      [350, 'SIGTERM'],
    ]);
    expect(exits).toEqual([expect.objectContaining({ at: 350, signal: 'SIGTERM', done: false })]);
  });

  it('an abort stops the run and errors with CancelledError once the CLI has exited', () => {
    const scheduler = marbles();
    const controller = new AbortController();
    const { run$ } = virtualRun(
      scheduler,
      { stdout: [[0, text('a')]], onSignal: { SIGINT: { exitCode: 130, afterMs: 40 } } },
      { signal: controller.signal },
    );
    scheduler.run(({ expectObservable }) => {
      scheduler.schedule(() => controller.abort(new Error('user')), 200);
      expectObservable(outcome$(run$).pipe(map((o) => (o as { message?: string }).message ?? o))).toBe('a 239ms (e|)', {
        a: 'text',
        e: 'run aborted (stopped with SIGINT; exited with code 130)',
      });
    });
  });

  it('a CLI that exits 0 without done errors with TruncatedStreamError at its exit, after every event', () => {
    const scheduler = marbles();
    const { run$ } = virtualRun(scheduler, {
      stdout: [
        [0, text('a')],
        [5, text('b')],
      ],
      exit: [70, 0],
    });
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$).pipe(map((o) => (o as { error?: string }).error ?? o))).toBe(
        'a 4ms b 64ms (e|)',
        { a: 'text', b: 'text', e: 'TruncatedStreamError' },
      );
    });
  });

  it('an infinite timeoutMs and lingerMs never fire', () => {
    const scheduler = marbles();
    const { run$, log } = virtualRun(
      scheduler,
      { stdout: [[0, done]], exit: [1_000_000, 0] },
      { timeoutMs: Infinity, lingerMs: Infinity },
    );
    scheduler.run(({ expectObservable }) => {
      expectObservable(outcome$(run$)).toBe('(d|)', { d: 'done' });
    });
    expect(log.signals).toEqual([]);
  });
});
