import type { SchedulerLike } from 'rxjs';

/** A pending action that can be cancelled. */
export interface Timer {
  clear(): void;
}

/**
 * Where a run's timers come from: `systemClock` in use, a virtual one
 * (`schedulerClock(testScheduler)`) in tests, so that the stop ladder,
 * `timeoutMs`, `lingerMs` and `killGraceMs` are tested in virtual time.
 */
export interface Clock {
  now(): number;
  /** Calls `action` once, `ms` from now; `Infinity` never fires. */
  schedule(ms: number, action: () => void): Timer;
}

/** The longest delay `setTimeout` honours; a longer one fires after 1 ms. */
const MAX_DELAY = 2 ** 31 - 1;

const never: Timer = { clear: () => undefined };

/**
 * Node's timers for any duration: a delay past what they hold is waited for
 * in steps. Unref'd: a pending timer alone does not keep Node running (the
 * child process it is about does).
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(ms, action) {
    if (ms === Infinity) return never;
    let handle: ReturnType<typeof setTimeout>;
    const arm = (left: number) => {
      handle = setTimeout(
        () => (left > MAX_DELAY ? arm(left - MAX_DELAY) : action()),
        Math.min(Math.max(0, left), MAX_DELAY),
      );
      handle.unref();
    };
    arm(ms);
    return { clear: () => clearTimeout(handle) };
  },
};

/** A clock that runs on an RxJS scheduler, such as a `TestScheduler`. */
export function schedulerClock(scheduler: SchedulerLike): Clock {
  return {
    now: () => scheduler.now(),
    schedule(ms, action) {
      if (ms === Infinity) return never;
      const subscription = scheduler.schedule(action, ms);
      return { clear: () => subscription.unsubscribe() };
    },
  };
}
