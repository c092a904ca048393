import { Observable } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events.js';
import { CliProcess } from './CliProcess.js';
import { systemClock } from './clock.js';
import { resolveOptions, type RunOptions } from './options.js';
import { RunSession, type RunEnvironment } from './RunSession.js';

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
 * ```ts
 * run({ prompt: 'Summarize attention into notes.md', workdir: '/tmp/task' })
 *   .pipe(ofType('text'))
 *   .subscribe((e) => process.stdout.write(e.content));
 * ```
 */
export function run(options: RunOptions & { keepUnknown: true }): Observable<EvoEvent | UnknownEvent>;
export function run(options: RunOptions): Observable<EvoEvent>;
export function run(options: RunOptions): Observable<EvoEvent | UnknownEvent> {
  return runIn(systemEnvironment, options);
}

/** `run()` with the process and the clock given: virtual ones test the lifecycle in virtual time. */
export function runIn(environment: RunEnvironment, options: RunOptions): Observable<EvoEvent | UnknownEvent> {
  const resolved = resolveOptions(options);
  return new Observable((subscriber) => new RunSession(subscriber, options, resolved, environment).start());
}
