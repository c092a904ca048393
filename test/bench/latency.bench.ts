/**
 * Write-to-subscriber latency of `run()`: the fake CLI stamps each event with
 * the wall-clock time it writes it (`written_at`), the subscriber subtracts
 * that from the time the event reaches it. Events are paced (`--gap` ms) so
 * each is measured on its own rather than in a batch.
 *
 * ```bash
 * npx tsx test/bench/latency.bench.ts               # 2000 events, 2 ms apart
 * npx tsx test/bench/latency.bench.ts --smoke       # 100 events, for CI
 * ```
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { lastValueFrom, tap } from 'rxjs';
import { run } from '../../index.js';
import { fakeEvoSci } from '../../testing/index.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string' },
    gap: { type: 'string', default: '2' },
    smoke: { type: 'boolean', default: false },
  },
});
const count = Number(flags.events ?? (flags.smoke ? 100 : 2000));
const gap = Number(flags.gap);

const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ type: 'text', content: `delta ${i} ` }));
const latencies: number[] = [];
const now = () => performance.timeOrigin + performance.now();
const fake = fakeEvoSci([
  { lines, delayMs: gap, stamp: true },
  { lines: ['{"type": "done", "content": "", "response": ""}'] },
]);

await lastValueFrom(
  run({ prompt: 'latency', ...fake }).pipe(
    tap((event) => {
      const writtenAt = (event as { written_at?: number }).written_at;
      if (writtenAt !== undefined) latencies.push(now() - writtenAt);
    }),
  ),
);

if (latencies.length !== count) throw new Error(`measured ${latencies.length} events, expected ${count}`);
// The first events also pay for compiling the decoding path.
const warmup = Math.min(50, Math.floor(count / 10));
latencies.splice(0, warmup);
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
const ms = (v: number) => `${v.toFixed(3)} ms`;
console.log(
  `run() write-to-subscriber latency, ${count} events ${gap} ms apart, first ${warmup} not counted (node ${process.version})`,
);
console.log(`  p50 ${ms(at(0.5))}   p90 ${ms(at(0.9))}   p99 ${ms(at(0.99))}   max ${ms(latencies.at(-1)!)}`);
if (!flags.smoke) console.log(`  target p99 < 5 ms: ${at(0.99) < 5 ? 'met' : 'missed'}`);
