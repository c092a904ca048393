/**
 * This checkout's `summarize()`, and `traceRun()` + `summarize()` on the real
 * SDK, against another checkout's, in one process: both versions over the
 * same decoded events, passes alternating (old new, new old, …) with a full
 * GC before each, so that what the machine does meanwhile falls on both
 * alike. Between separate processes this machine moves by more than a change
 * worth measuring; in one process, the minimum and the median of each tell it.
 *
 * ```bash
 * git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/node_modules
 * npx tsx test/bench/against.bench.ts --against /tmp/before          # 100 MB, 30 + 20 passes each
 * npx tsx test/bench/against.bench.ts --against /tmp/before --smoke  # ~2 MB, 2 passes each
 * npx tsx test/bench/against.bench.ts --against /tmp/before --mix bytes  # the byte-heavy transcript
 * ```
 */
import { createReadStream } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { from, lastValueFrom, toArray, type Observable } from 'rxjs';
import { fromJsonl, type EvoEvent, type UnknownEvent } from '../../src/index.js';
import { summarize } from '../../operators/index.js';
import { traceRun } from '../../otel/index.js';
import { largeTranscript } from '../fixtures/producer.js';
import { transcriptMix } from './mix.js';
import { median, table } from './report.js';
import { timedRounds } from './rounds.js';
import { Sdk } from './sdk.js';

const { values: flags } = parseArgs({
  options: {
    against: { type: 'string' },
    smoke: { type: 'boolean' },
    mb: { type: 'string' },
    mix: { type: 'string', default: 'text' },
  },
});
const mix = transcriptMix(flags.mix);
if (flags.against === undefined) throw new TypeError('against.bench.ts: --against DIR (another checkout) is needed');
const smoke = flags.smoke === true;
const mb = Number(flags.mb ?? (smoke ? 2 : 100));

type Events = readonly (EvoEvent | UnknownEvent)[];
type Summarize = typeof summarize;
type TraceRun = typeof traceRun;

const { tracerProvider, meterProvider } = new Sdk();

interface Side {
  readonly label: string;
  readonly pass: (events: Events) => Observable<unknown>;
  readonly times: number[];
  readonly cpu: number[];
}

/** Two sides, old and new, one untimed pass each, then measured in alternating order. */
async function compare(what: string, passes: number, events: Events, sides: readonly Side[]): Promise<string[]> {
  const order = (r: number) => (r % 2 === 0 ? sides : [...sides].reverse());
  for (const side of sides) await lastValueFrom(side.pass(events));
  for (let r = 0; r < passes; r++) {
    await timedRounds(
      order(r),
      1,
      (side) => lastValueFrom(side.pass(events)),
      () => undefined,
    );
    // The spans batched meanwhile are exported between passes, on neither side's clock.
    await tracerProvider.forceFlush();
  }
  const [before, after] = sides.map((s) => ({ min: Math.min(...s.times) * 1000, median: median(s.times) * 1000 }));
  return [
    what,
    `${passes}`,
    `${before!.min.toFixed(1)} → ${after!.min.toFixed(1)} (${(after!.min / before!.min).toFixed(3)}×)`,
    `${before!.median.toFixed(1)} → ${after!.median.toFixed(1)} (${(after!.median / before!.median).toFixed(3)}×)`,
  ];
}

async function main(): Promise<void> {
  const dir = pathToFileURL(`${resolve(flags.against!)}/`);
  const old = {
    summarize: ((await import(new URL('operators/index.ts', dir).href)) as { summarize: Summarize }).summarize,
    traceRun: ((await import(new URL('otel/index.ts', dir).href)) as { traceRun: TraceRun }).traceRun,
  };
  const transcript = largeTranscript({ mb, mix });
  const events: Events = await lastValueFrom(fromJsonl(createReadStream(transcript.path)).pipe(toArray()));
  console.log(
    `${events.length.toLocaleString('en')} events (${mb} MB, ${mix} mix); against ${flags.against}; node ${process.version}`,
  );
  const side = (label: string, pass: Side['pass']): Side => ({ label, pass, times: [], cpu: [] });
  const rows = [
    await compare('summarize()', smoke ? 2 : 30, events, [
      side('old', (e) => from(e).pipe(old.summarize())),
      side('new', (e) => from(e).pipe(summarize())),
    ]),
    await compare('traceRun() + summarize(), real SDK', smoke ? 2 : 20, events, [
      side('old', (e) => from(e).pipe(old.traceRun({ tracerProvider, meterProvider }), old.summarize())),
      side('new', (e) => from(e).pipe(traceRun({ tracerProvider, meterProvider }), summarize())),
    ]),
  ];
  console.log();
  console.log(table(['pipeline', 'passes each', 'min ms, old → new', 'median ms, old → new'], rows));
}

await main();
