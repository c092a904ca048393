import { asyncScheduler, concat, defer, filter, map, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { EvoEvent, UnknownEvent } from '../src/events/codecs.js';
import { ToolCallTracker, type ToolInvocation } from './ToolCallTracker.js';

export type { ToolInvocation } from './ToolCallTracker.js';

/**
 * Pairs tool calls with their results, main-agent and sub-agent alike, and
 * emits a `ToolInvocation` snapshot each time one changes: when a call is
 * first seen (`running`), when a re-sent call brings new arguments, when its
 * result lands (`succeeded` / `failed`), and, when the source completes, for
 * each call still open: `awaiting-input` if the run stopped to ask about it
 * (in any agent: see `ToolCallTracker`), else `unfinished`.
 *
 * 0.2.x sends each call once; other producers may send one again, which
 * updates its invocation and never opens another. Results pair by `id`; one
 * without an id closes the oldest open call of the same name (in the same
 * sub-agent). Timestamps come from `scheduler` (virtual time in tests).
 * An exception while pairing errors the subscriber, as `map` does.
 *
 * ```ts
 * run$.pipe(pairToolCalls()).subscribe((inv) => ui.setTool(inv.key, inv.status, inv.name));
 * ```
 *
 * ```
 * source:          --c1--c2--c1'--r1--c1--c2--r2--|    c1': c1 re-sent with full args
 * pairToolCalls(): --a---b---c----d-----------e---|    a: c1 running, b: c2 running,
 *                                                      c: c1 new args, d: c1 succeeded, e: c2 failed
 * source:          --c1--|
 * pairToolCalls(): --a---(u|)                          u: c1 unfinished
 * ```
 */
export function pairToolCalls(
  options: { readonly scheduler?: SchedulerLike } = {},
): OperatorFunction<EvoEvent | UnknownEvent, ToolInvocation> {
  const scheduler = options.scheduler ?? asyncScheduler;
  return (source) =>
    defer(() => {
      const tracker = new ToolCallTracker(() => scheduler.now());
      return concat(
        source.pipe(
          map((event) => tracker.push(event)),
          filter((snapshot): snapshot is ToolInvocation => snapshot !== undefined),
        ),
        // Subscribed only once the source has completed: an error skips it.
        defer(() => tracker.finish()),
      );
    });
}
