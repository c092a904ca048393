// Interleaved timed rounds, as the in-process benchmarks measure their variants.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A full collection before each timed pass, so that one variant's garbage is not collected on another's clock.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** What a variant collects: wall-clock and process CPU seconds (user + system, all threads) of each timed pass. */
export interface Timed {
  readonly times: number[];
  readonly cpu: number[];
}

/**
 * `rounds` rounds of one pass of each variant in turn (1 2 3 1 2 3 …), a full
 * GC before each pass; `check` sees each pass's result.
 */
export async function timedRounds<V extends Timed, R>(
  variants: readonly V[],
  rounds: number,
  pass: (variant: V) => Promise<R>,
  check: (variant: V, result: R) => void,
): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      gc();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const result = await pass(v);
      v.times.push((performance.now() - t0) / 1000);
      const c = process.cpuUsage(c0);
      v.cpu.push((c.user + c.system) / 1e6);
      check(v, result);
    }
  }
}
