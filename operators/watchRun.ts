import { asyncScheduler, finalize, Observable, tap, type MonoTypeOperatorFunction, type SchedulerLike } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import { RunModel } from './RunModel.js';

/** What follows one subscription to a run through its `RunModel`: told how the subscription ended. */
export interface RunWatcher {
  /**
   * The source completed. The model's closing changes (what was still open)
   * come right after; call `model.finish()` here to hear them before.
   */
  complete(): void;
  /** The source errored. */
  fail(error: unknown): void;
  /** Teardown: after `complete` or `fail`, or when unsubscribed first. */
  close(): void;
}

/**
 * Starts watching one subscription: listens to `model` (`model.listen`) and
 * returns how to tell it the end, or `undefined` to watch nothing.
 */
export type WatchRun = (model: RunModel) => RunWatcher | undefined;

/**
 * A run's events, passed on unchanged by `watchRun`. Subscribed as it is, it
 * feeds a model of its own; `summarize()`, which keeps a model anyway,
 * subscribes to `upstream` instead and lets the watcher listen to its model.
 */
export class WatchedRun<T extends EvoEvent | UnknownEvent> extends Observable<T> {
  constructor(
    /** The events as they came, before the watcher. */
    readonly upstream: Observable<T>,
    readonly watch: WatchRun,
    scheduler: SchedulerLike,
  ) {
    super((subscriber) => {
      const model = new RunModel(() => scheduler.now());
      const watcher = watch(model);
      if (watcher === undefined) return upstream.subscribe(subscriber);
      return upstream
        .pipe(
          tap((event) => model.push(event)),
          // After the push, so that a watcher that throws ends its own run failed, as under summarize().
          tap({
            complete: () => {
              watcher.complete();
              model.finish();
            },
            error: (error: unknown) => watcher.fail(error),
          }),
          finalize(() => watcher.close()),
        )
        .subscribe(subscriber);
    });
  }
}

/**
 * Follows each subscription to a run through a `RunModel` and passes the
 * events on unchanged: `watch` listens to the model's changes and is told how
 * the subscription ended. Right before `summarize()`, the watcher listens to
 * the summary's own model, so each event is taken once for both; anywhere
 * else, it gets a model of its own, which keeps only what is open. This is
 * how `traceRun()` is built; a metrics exporter or an audit log is built the
 * same way.
 *
 * ```ts
 * run$.pipe(
 *   watchRun((model) => {
 *     model.listen((c) => c.kind === 'invocation' && c.invocation.status === 'failed' && alert(c.invocation));
 *     return { complete: () => log(model.outcome()), fail: () => undefined, close: () => undefined };
 *   }),
 *   summarize(),
 * );
 * ```
 *
 * ```
 * source:     --c--r--d--|
 * watchRun(): --c--r--d--|     (the same events; the watcher hears c's and r's invocation, then complete)
 * ```
 */
export function watchRun<T extends EvoEvent | UnknownEvent>(
  watch: WatchRun,
  options: { readonly scheduler?: SchedulerLike } = {},
): MonoTypeOperatorFunction<T> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) => new WatchedRun(source, watch, scheduler);
}
