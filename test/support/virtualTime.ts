// Virtual time for code that awaits promises as well as timers (`followRun`
// over a fake `fetch`): a timer fires only once everything else has settled,
// so time moves as it would on an idle machine, and never by the wall clock.
import type { VirtualTimeScheduler } from 'rxjs';

/** Resolves once every microtask queued so far, and every one they queue, has run. */
export async function settled(): Promise<void> {
  // Two turns: work that the first turn's callbacks put off to a macrotask of its own runs before the second.
  for (let turn = 0; turn < 2; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Fires the scheduler's timers one at a time, in order, each once the code
 * has settled, until `done()` says so or no timer is left. Throws past
 * `limit` timers: a follower that never stops is a failure, not a hang.
 */
export async function runTimers(scheduler: VirtualTimeScheduler, done: () => boolean, limit = 1000): Promise<void> {
  for (let fired = 0; ; fired++) {
    await settled();
    const next = scheduler.actions[0];
    if (done() || next === undefined) return;
    if (fired === limit) throw new Error(`still running after ${limit} timers, at ${scheduler.now()} ms`);
    scheduler.maxFrames = next.delay;
    scheduler.flush();
  }
}
