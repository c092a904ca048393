import { isObservable, Observable } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import { CliProcess } from './CliProcess.js';
import { systemClock } from './clock.js';
import { resolveOptions, type RunOptions } from './options.js';
import { carryRunOptions } from './runOptionsOf.js';
import { RunSession, type RunEnvironment } from './RunSession.js';
import { runStandIns, type RunStandIn } from './standIn.js';

export type { ExitInfo, RunOptions } from './options.js';

/** Real processes on Node's timers. */
export const systemEnvironment: RunEnvironment = {
  clock: systemClock,
  startCli: (command, args, options) => new CliProcess(command, args, options),
};

/**
 * One EvoSci run as a cold Observable of its events.
 *
 * Each subscription starts one process (`command --prompt=… --output-format=stream-json …`,
 * no shell) and emits each event as soon as its line is written. It completes
 * as soon as `done` is read, a run that stopped to ask (`needs-input`) too; the
 * process may then finish its clean-up for up to `lingerMs`, and `onExit`
 * reports how it exited. Without `done` it errors, after every whole event,
 * with `SpawnError`, `ExitError`, `TruncatedStreamError`, `TimeoutError`,
 * `CancelledError` or (with `strict`) `DecodeError`. Options are checked
 * when `run` is called: a mistake throws a `TypeError`.
 *
 * Unsubscribing before `done`, `timeoutMs` and `signal` stop the process and
 * every process it started (its process group): SIGINT, so that EvoSci cleans
 * up and prints its resume hint, then SIGTERM and SIGKILL, `killGraceMs`
 * apart. The error arrives once the process has exited, with the thread id it
 * printed. Processes left in the group when the CLI exits are killed, and so
 * are all runs' groups if Node itself exits.
 *
 * Inside `withFakeRuns` (`evosci-rx/testing`), a test's stand-in answers
 * instead: marble events, or a fake CLI.
 *
 * ```ts
 * run({ prompt: 'Summarize attention into notes.md', workdir: '/tmp/task' })
 *   .pipe(ofType('text'))
 *   .subscribe((e) => process.stdout.write(e.content));
 * ```
 */
export function run(options: RunOptions & { keepUnknown: true }): Observable<EvoEvent | UnknownEvent>;
export function run(options: RunOptions): Observable<EvoEvent>;
export function run(options: RunOptions): Observable<EvoEvent | UnknownEvent> {
  const standIn = runStandIns.getStore();
  return standIn === undefined ? runIn(systemEnvironment, options) : runStandIn(standIn, options);
}

/**
 * `run()` inside `withFakeRuns` (evosci-rx/testing): its options checked as
 * always, then the stand-in's events, or the process it names. The stand-in
 * is called outside its own scope, so that one that calls `run()` starts a
 * real process rather than itself.
 */
function runStandIn(standIn: RunStandIn, options: RunOptions): Observable<EvoEvent | UnknownEvent> {
  resolveOptions(options);
  const instead = runStandIns.exit(() => standIn(options));
  return isObservable(instead) ? instead : runIn(systemEnvironment, instead);
}

/** `run()` with the process and the clock given: virtual ones test the lifecycle in virtual time. */
export function runIn(environment: RunEnvironment, options: RunOptions): Observable<EvoEvent | UnknownEvent> {
  const resolved = resolveOptions(options);
  // Its prompt and thread go with it, for `traceRun()`: a trace of it is not told them a second time.
  return carryRunOptions(
    new Observable<EvoEvent | UnknownEvent>((subscriber) => new RunSession(subscriber, resolved, environment).start()),
    options,
  );
}
