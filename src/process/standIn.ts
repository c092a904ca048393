import { AsyncLocalStorage } from 'node:async_hooks';
import type { Observable } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../events/codecs.js';
import type { RunOptions } from './options.js';

/**
 * What `run()` does instead while a test's stand-in is in place: the events
 * to emit, or the options of the process to start instead (a fake CLI).
 */
export type RunStandIn = (options: RunOptions) => Observable<EvoEvent | UnknownEvent> | RunOptions;

/**
 * The stand-in for `run()` in the current async context, set by
 * `withFakeRuns` of `evosci-rx/testing`. Per async context rather than a
 * module-level switch, so that tests running at once in one process each see
 * their own, and nothing outlives the scope that set it. Unused, it costs
 * `run()` one lookup that finds nothing.
 */
export const runStandIns = new AsyncLocalStorage<RunStandIn>();
