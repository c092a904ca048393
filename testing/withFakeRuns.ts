import { from, isObservable, type Observable, type ObservableInput } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import type { RunOptions } from '../src/process/options.js';
import { runStandIns, type RunStandIn } from '../src/process/standIn.js';

/** A fake CLI to start instead of EvoSci: the `command` and `env` that `fakeRun()` and `fakeEvoSci()` give. */
export interface FakeCli {
  /** The fake CLI to start instead of EvoSci. */
  readonly command: string;
  /** The environment that gives the fake its script. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Events a run emits instead: a marble `cold(…)`, an array, any `ObservableInput`. */
export type FakeEvents = ObservableInput<EvoEvent | UnknownEvent>;

/**
 * What each `run()` inside `withFakeRuns` gives instead of starting EvoSci:
 * the same events (or fake CLI) for every run, or a function of the run's
 * options that picks them (by `prompt`, by `resume`, …).
 */
export type FakeRunSource = FakeEvents | FakeCli | ((options: RunOptions) => FakeEvents | FakeCli);

/**
 * Calls `fn` with `run()` answered by `source` instead of EvoSci, for code
 * that calls `run()` itself (an epic, a service, a route handler): no
 * dependency injection needed. What `fn` returns is returned, a promise
 * included; the stand-in holds for everything `fn` starts, synchronously or
 * after an `await`, and for nothing else: tests running at once each see
 * their own (it lives in the async context, as `AsyncLocalStorage` keeps it).
 *
 * - events (a marble `cold(…)`, an array): every run emits them; options are
 *   still checked, and a mistake throws as `run()` does;
 * - a fake CLI (`fakeRun(recordedRuns.research)`): every run starts it as a
 *   real child process, with its own options (prompt, `resume`, callbacks)
 *   and the fake's `command` and `env`;
 * - a function of the options: its answer, per run. It runs outside the
 *   stand-in, so a `run()` it calls starts a real process.
 *
 * `run()` asks for the stand-in when it is called. Under a `TestScheduler`,
 * the marbles play when `scheduler.run` flushes, after its callback returns:
 * wrap the whole `scheduler.run(…)` call, and make the run's events with
 * `scheduler.createColdObservable`.
 *
 * ```ts
 * withFakeRuns(
 *   ({ prompt }) => scheduler.createColdObservable('-t-d|', { t: events.text(prompt), d: events.done(prompt) }),
 *   () => scheduler.run(({ hot, expectObservable }) => expectObservable(epic(hot('-a', actions))).toBe('----x', expected)),
 * );
 * await withFakeRuns(fakeRun(recordedRuns.failed), () => lastValueFrom(service.research('x')));
 * ```
 */
export function withFakeRuns<T>(source: FakeRunSource, fn: () => T): T {
  return runStandIns.run(standInOf(source), fn);
}

function standInOf(source: FakeRunSource): RunStandIn {
  if (typeof source === 'function') return (options) => answer(source(options), options);
  return (options) => answer(source, options);
}

function isFakeCli(value: FakeEvents | FakeCli): value is FakeCli {
  return !isObservable(value) && typeof (value as Partial<FakeCli>).command === 'string';
}

function answer(given: FakeEvents | FakeCli, options: RunOptions): Observable<EvoEvent | UnknownEvent> | RunOptions {
  if (isFakeCli(given)) return { ...options, command: given.command, env: { ...options.env, ...given.env } };
  return from(given);
}
