/** The runs waiting on each signal: one listener per signal, however many runs share it (no MaxListeners warning). */
const abortWaiters = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `onAbort` when `signal` aborts; returns the function that stops waiting. */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let waiters = abortWaiters.get(signal);
  if (!waiters) {
    const all = new Set<() => void>();
    waiters = all;
    abortWaiters.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        for (const waiter of [...all]) waiter();
      },
      { once: true },
    );
  }
  const own = () => onAbort();
  waiters.add(own);
  return () => waiters.delete(own);
}
