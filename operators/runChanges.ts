import { asyncScheduler, defer, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { eventByEvent, Reports } from './eventByEvent.js';
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import type { RunChange, SummaryChange } from './runChange.js';
import { RunModel } from './RunModel.js';

/**
 * Every change the run model makes, in order, as each event comes: an
 * invocation's snapshots, a delegation's start, events and end, a panel
 * dispatch's state, usage, questions, errors, text deltas; when the source
 * completes, the closing changes of what was still open, then the run's
 * summary (`{ kind: 'summary' }`, what `summarize()` gives). What
 * `viewActions()` is built on; build your own view, store or log on it the
 * same way. An error of the source is passed on, with no closing changes.
 *
 * ```ts
 * run$.pipe(runChanges()).subscribe((change) => {
 *   if (change.kind === 'invocation') table.upsert(change.invocation);
 * });
 * ```
 *
 * ```
 * source:       --c------r-----d--|          c/r: a tool call and its result, d: done
 * runChanges(): --i------i-----D--(S|)       i: invocation, D: done, S: summary
 * ```
 */
export function runChanges(
  options: { readonly scheduler?: SchedulerLike } = {},
): OperatorFunction<EvoEvent | UnknownEvent, RunChange | SummaryChange> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    defer(() => {
      const model = new RunModel(() => scheduler.now(), { summary: true });
      const changes = new Reports<RunChange | SummaryChange>();
      model.listen(changes.push, { deltas: true });
      // Once the source has completed, what was still open closes, then the summary.
      return eventByEvent(
        source,
        changes,
        (event) => model.push(event),
        () => changes.push({ kind: 'summary', summary: model.summary() }),
      );
    });
}
