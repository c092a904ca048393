/** The longest delay `setTimeout` honours; a longer one fires after 1 ms. */
const MAX_DELAY = 2 ** 31 - 1;

/** A timer that can be cleared. */
export interface Timer {
  clear(): void;
}

/**
 * `setTimeout` for any duration: a delay past what Node's timers hold is
 * waited for in steps, and `Infinity` never fires. Unref'd: a pending
 * timeout alone does not keep Node running (the child process it is about
 * does).
 */
export function after(ms: number, action: () => void): Timer {
  let handle: ReturnType<typeof setTimeout> | undefined;
  const arm = (left: number) => {
    if (left === Infinity) return;
    handle = setTimeout(
      () => (left > MAX_DELAY ? arm(left - MAX_DELAY) : action()),
      Math.min(Math.max(0, left), MAX_DELAY),
    );
    handle.unref();
  };
  arm(ms);
  return { clear: () => clearTimeout(handle) };
}
