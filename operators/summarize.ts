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
import { RunModel } from './RunModel.js';
import { SummaryBook } from './SummaryBook.js';
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
 * It folds the changes of a `RunModel`. Right after `watchRun()` (as
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
      const model = new RunModel(() => scheduler.now(), { text: true });
      const book = new SummaryBook();
      model.listen(book.take);
      if (!(source instanceof WatchedRun)) return summarized(source, model, book);
      const { upstream, watch } = source as WatchedRun<EvoEvent | UnknownEvent>;
      const watcher = watch(model);
      return watcher === undefined ? summarized(upstream, model, book) : watched(upstream, model, book, watcher);
    });
}

function summarized(
  events$: Observable<EvoEvent | UnknownEvent>,
  model: RunModel,
  book: SummaryBook,
): Observable<RunSummary> {
  return events$.pipe(
    reduce((m, event) => m.push(event), model),
    map((m) => book.summaryOf(m)),
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
  book: SummaryBook,
  watcher: RunWatcher,
): Observable<RunSummary> {
  return events$.pipe(
    reduce((m, event) => m.push(event), model),
    tap({ error: (error: unknown) => watcher.fail(error) }),
    map((m) => {
      watcher.complete();
      return book.summaryOf(m);
    }),
    finalize(() => watcher.close()),
  );
}
