/**
 * What `summarize()` costs on its own, over events decoded beforehand (no
 * reading, no parsing: only the summary's per-event work):
 *
 *   (1) hand-written  one imperative loop computing the same RunSummary (handTally.ts)
 *   (2) RunModel      the run model and summary book `summarize()` is built on, fed by a for loop: no Rx
 *   (3) summarize()   from(events).pipe(summarize())
 *   (4) Rx floor      from(events).pipe(count()): what any operator pays to see each event
 *
 * One untimed warm-up pass of each, then N interleaved rounds with a full GC
 * before each timed pass; medians reported. Every variant must produce the
 * summary of the hand-written loop (timestamps aside), or the script aborts.
 *
 * ```bash
 * npx tsx test/bench/summarize.bench.ts                # 100 MB, 7 rounds
 * npx tsx test/bench/summarize.bench.ts --smoke        # ~2 MB, 1 round
 * npx tsx test/bench/summarize.bench.ts --only 1,3 --rounds 9
 * npx tsx test/bench/summarize.bench.ts --mix bytes  # the byte-heavy transcript: tool results of a few KB
 * ```
 */
import { createReadStream } from 'node:fs';
import { cpus } from 'node:os';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { count, from, lastValueFrom, toArray } from 'rxjs';
import { fromJsonl, type EvoEvent, type UnknownEvent } from '../../src/index.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { RunModel } from '../../operators/RunModel.js';
import { largeTranscript } from '../fixtures/producer.js';
import { transcriptMix } from './mix.js';
import { handTally } from './handTally.js';
import { median, table } from './report.js';
import { timedRounds } from './rounds.js';

const { values: flags } = parseArgs({
  options: {
    smoke: { type: 'boolean' },
    rounds: { type: 'string' },
    mb: { type: 'string' },
    only: { type: 'string' },
    mix: { type: 'string', default: 'text' },
  },
});
const mix = transcriptMix(flags.mix);
const smoke = flags.smoke === true;
const rounds = smoke ? 1 : Number(flags.rounds ?? 7);
const mb = Number(flags.mb ?? (smoke ? 2 : 100));
const only = flags.only === undefined ? undefined : new Set(flags.only.split(',').map((s) => Number(s.trim())));

type Events = readonly (EvoEvent | UnknownEvent)[];

/** What a pass gives back: a summary to compare, or the number of events the floor counted. */
type Outcome = RunSummary | number;

interface Variant {
  readonly id: number;
  readonly label: string;
  readonly run: (events: Events) => Promise<Outcome>;
  readonly times: number[];
  readonly cpu: number[];
}

function tallied(events: Events): RunSummary {
  const model = new RunModel(Date.now, { summary: true });
  for (const event of events) model.push(event);
  return model.summary();
}

/** A summary without its clock readings, which differ from pass to pass. */
function timeless(summary: RunSummary): unknown {
  return {
    ...summary,
    invocations: summary.invocations.map(({ startedAt: _s, endedAt: _e, ...rest }) => rest),
  };
}

async function main(): Promise<void> {
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, node ${process.version}`);
  const transcript = largeTranscript({ mb, mix });
  const events: Events = await lastValueFrom(
    fromJsonl(createReadStream(transcript.path, { highWaterMark: 1 << 20 })).pipe(toArray()),
  );
  console.log(
    `transcript: ${mix} mix, ${(transcript.bytes / 1e6).toFixed(1)} MB, ${events.length} events, decoded beforehand`,
  );
  const variants: Variant[] = [
    { id: 1, label: '(1) hand-written tally', run: async (e) => handTally(e, Date.now), times: [], cpu: [] },
    { id: 2, label: '(2) RunModel, no Rx', run: async (e) => tallied(e), times: [], cpu: [] },
    { id: 3, label: '(3) summarize()', run: (e) => lastValueFrom(from(e).pipe(summarize())), times: [], cpu: [] },
    { id: 4, label: '(4) Rx floor: count()', run: (e) => lastValueFrom(from(e).pipe(count())), times: [], cpu: [] },
  ];
  const active = variants.filter((v) => only === undefined || only.has(v.id));
  const expected = timeless(handTally(events, Date.now));
  const check = (v: Variant, outcome: Outcome): void => {
    const same =
      typeof outcome === 'number' ? outcome === events.length : isDeepStrictEqual(timeless(outcome), expected);
    if (!same) throw new Error(`${v.label} does not give the hand-written loop's summary`);
  };
  for (const v of active) check(v, await v.run(events));
  await timedRounds(active, rounds, (v) => v.run(events), check);

  const base = median(active[0]!.times);
  const rows = active.map((v) => [
    v.label,
    (median(v.times) * 1000).toFixed(1),
    `${(median(v.times) / base).toFixed(2)}×`,
    `${((median(v.times) * 1e9) / events.length).toFixed(0)}`,
    (median(v.cpu) * 1000).toFixed(1),
  ]);
  console.log();
  console.log(table(['variant', 'median ms', 'time vs first', 'ns/event', 'median CPU ms'], rows));
  console.log();
  for (const v of active) console.log(`  ${v.label}: ${v.times.map((t) => (t * 1000).toFixed(1)).join('  ')}`);
}

await main();
