import {
  asyncScheduler,
  defer,
  finalize,
  map,
  reduce,
  tap,
  type Observable,
  type OperatorFunction,
  type SchedulerLike,
} from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events.js';
import { TracedRun, type TallyFollower } from './TracedRun.js';
import { RunTally } from './RunTally.js';
import type { RunSummary } from './summaryTypes.js';

/**
 * One `RunSummary` when the source completes: how the run ended, the final
 * response, the main agent's token totals, every tool invocation in its final state (without
 * its output, which `pairToolCalls` gives as it comes), every delegation and
 * panel dispatch, errors, the questions and approvals (and which of them the
 * run stopped at), and event counts by type. It pairs and groups in the same
 * single pass as `pairToolCalls` and `groupSubagents`, so it subscribes to
 * the source once. An exception while summarizing errors the subscriber.
 *
 * An error of the source is passed on and no summary is emitted; to summarize
 * a failed run, catch first: `run$.pipe(catchError(() => EMPTY), summarize())`.
 *
 * Right after `traceRun()`, the trace follows this summary's tally rather
 * than keeping its own: each event is taken once, for both.
 *
 * ```ts
 * const summary = await lastValueFrom(run$.pipe(summarize()));
 * if (summary.outcome === 'needs-input') console.log(summary.pendingQuestions);
 * ```
 *
 * ```
 * source:      --t--c--r--u--d--|
 * summarize(): -----------------(s|)
 * ```
 */
export function summarize(
  options: { readonly scheduler?: SchedulerLike } = {},
): OperatorFunction<EvoEvent | UnknownEvent, RunSummary> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    defer(() => {
      const tally = new RunTally(() => scheduler.now());
      if (!(source instanceof TracedRun)) return tallied(source, tally);
      const { upstream, follow } = source as TracedRun<EvoEvent | UnknownEvent>;
      const follower = follow(tally);
      return follower === undefined ? tallied(upstream, tally) : followed(upstream, tally, follower);
    });
}

function tallied(events$: Observable<EvoEvent | UnknownEvent>, tally: RunTally): Observable<RunSummary> {
  return events$.pipe(
    reduce((t, event) => t.push(event), tally),
    map((t) => t.summary()),
  );
}

/**
 * The summary, with a follower listening to its tally. Told how the run
 * ended after the `reduce`, where that costs nothing per event; told it
 * completed before the summary is made, as it would be before `summarize`.
 */
function followed(
  events$: Observable<EvoEvent | UnknownEvent>,
  tally: RunTally,
  follower: TallyFollower,
): Observable<RunSummary> {
  return events$.pipe(
    reduce((t, event) => t.push(event), tally),
    tap({ error: (error: unknown) => follower.fail(error) }),
    map((t) => {
      follower.complete();
      return t.summary();
    }),
    finalize(() => follower.close()),
  );
}
