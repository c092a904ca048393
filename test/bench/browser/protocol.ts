// What the browser benchmark's page offers its Node driver. No DOM, no Node.

/** One timed pass in the page: events counted, milliseconds from `fetch` to the last event. */
export interface PassResult {
  readonly events: number;
  readonly ms: number;
}

export const VARIANTS = ['drain', 'baseline', 'fromJsonl'] as const;
export type Variant = (typeof VARIANTS)[number];

/** Set on the page's `globalThis` once it has loaded. */
export interface BenchPage {
  run(variant: Variant, url: string): Promise<PassResult>;
  /**
   * Where fromJsonl's time goes: its stages timed one by one over the same
   * body held in memory (no network), `rounds` times each; medians in ms.
   */
  breakdown(url: string, rounds: number): Promise<Readonly<Record<string, number>>>;
  /** A full collection (Chromium started with `--js-flags=--expose-gc`). */
  gc(): void;
}

export const BENCH_GLOBAL = 'evosciBench';
