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
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import { RunModel } from './RunModel.js';
import type { RunSummary } from './summaryTypes.js';
import { WatchedRun, type RunWatcher } from './watchRun.js';

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
 * It is a `RunModel`'s summary. Right after `watchRun()` (as
 * `traceRun()`), the watcher listens to this model rather than keeping its
 * own: each event is taken once, for both.
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
      const model = new RunModel(() => scheduler.now(), { summary: true });
      if (!(source instanceof WatchedRun)) return summarized(source, model);
      const { upstream, watch } = source as WatchedRun<EvoEvent | UnknownEvent>;
      const watcher = watch(model);
      return watcher === undefined ? summarized(upstream, model) : watched(upstream, model, watcher);
    });
}

function summarized(events$: Observable<EvoEvent | UnknownEvent>, model: RunModel): Observable<RunSummary> {
  return events$.pipe(
    reduce((m, event) => m.push(event), model),
    map((m) => m.summary()),
  );
}

/**
 * The summary, with a watcher listening to its model. Told how the run
 * ended after the `reduce`, where that costs nothing per event; told it
 * completed before the summary is made, as it would be before `summarize`.
 */
function watched(
  events$: Observable<EvoEvent | UnknownEvent>,
  model: RunModel,
  watcher: RunWatcher,
): Observable<RunSummary> {
  return events$.pipe(
    reduce((m, event) => m.push(event), model),
    tap({ error: (error: unknown) => watcher.fail(error) }),
    map((m) => {
      watcher.complete();
      return m.summary();
    }),
    finalize(() => watcher.close()),
  );
}
