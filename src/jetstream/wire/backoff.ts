/** Waits that double from `firstMs` to at most `maxMs`: the pauses of a broker call tried again until it answers. */
export function* doubling(firstMs: number, maxMs: number): Generator<number, never> {
  for (let delay = firstMs; ; delay = Math.min(delay * 2, maxMs)) yield delay;
}

/** Resolves after `ms`. */
export function pause(ms: number): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}
