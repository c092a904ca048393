/**
 * What `eachEvent` costs a `for await` loop, over events decoded beforehand:
 *
 *   (1) generator   `for await` over an async generator that yields each event: the floor of any async iteration
 *   (2) eachEvent   `for await` over eachEvent(from(events)): the source runs ahead, its events queued in a Fifo
 *   (3) Fifo        the queue alone: every event pushed into a Fifo, then shifted out, no iteration
 *   (4) array       the same with an array and a head index, what the Fifo replaced: the queue's own floor
 *
 * One untimed warm-up pass of each, then N interleaved rounds with a full GC
 * before each timed pass; medians reported. Every variant must see every
 * event, or the script aborts.
 *
 * ```bash
 * npx tsx test/bench/eachEvent.bench.ts              # 100 MB transcript, 7 rounds
 * npx tsx test/bench/eachEvent.bench.ts --smoke      # ~2 MB, 1 round
 * ```
 */
import { createReadStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { from, lastValueFrom, toArray } from 'rxjs';
import { Fifo } from '../../src/common/Fifo.js';
import { eachEvent } from '../../src/flow/index.js';
import { fromJsonl, type EvoEvent, type UnknownEvent } from '../../src/index.js';
import { largeTranscript } from '../fixtures/producer.js';
import { median, table } from './report.js';
import { timedRounds } from './rounds.js';

const { values: flags } = parseArgs({
  options: { smoke: { type: 'boolean' }, rounds: { type: 'string' }, mb: { type: 'string' } },
});
const smoke = flags.smoke === true;
const rounds = smoke ? 1 : Number(flags.rounds ?? 7);
const mb = Number(flags.mb ?? (smoke ? 2 : 100));

type Events = readonly (EvoEvent | UnknownEvent)[];

interface Variant {
  readonly label: string;
  readonly run: (events: Events) => Promise<number>;
  readonly times: number[];
  readonly cpu: number[];
}

async function* generated(events: Events): AsyncGenerator<EvoEvent | UnknownEvent> {
  for (const event of events) yield event;
}

/** How many known events a loop saw: a result each pass must give, so that none is optimised away. */
async function iterated(iterable: AsyncIterable<EvoEvent | UnknownEvent>): Promise<number> {
  let seen = 0;
  for await (const event of iterable) if (event.type !== 'unknown') seen++;
  return seen;
}

function fifoPass(events: Events): number {
  const queue = new Fifo<EvoEvent | UnknownEvent>();
  for (const event of events) queue.push(event);
  let seen = 0;
  while (queue.length > 0) if (queue.shift()!.type !== 'unknown') seen++;
  return seen;
}

function arrayPass(events: Events): number {
  const queue: (EvoEvent | UnknownEvent)[] = [];
  for (const event of events) queue.push(event);
  let seen = 0;
  for (let head = 0; head < queue.length; head++) if (queue[head]!.type !== 'unknown') seen++;
  return seen;
}

async function main(): Promise<void> {
  const transcript = largeTranscript({ mb });
  const events: Events = await lastValueFrom(fromJsonl(createReadStream(transcript.path)).pipe(toArray()));
  const known = events.filter((e) => e.type !== 'unknown').length;
  console.log(`${events.length.toLocaleString('en')} events (${mb} MB), ${rounds} rounds, node ${process.version}`);

  const variants: Variant[] = [
    { label: '(1) async generator', run: (e) => iterated(generated(e)), times: [], cpu: [] },
    { label: '(2) eachEvent', run: (e) => iterated(eachEvent(from(e))), times: [], cpu: [] },
    { label: '(3) Fifo alone', run: async (e) => fifoPass(e), times: [], cpu: [] },
    { label: '(4) array alone', run: async (e) => arrayPass(e), times: [], cpu: [] },
  ];
  const check = (v: Variant, seen: number) => {
    if (seen === known) return;
    console.error(`${v.label} saw ${seen} events, not ${known}`);
    process.exit(1);
  };
  for (const v of variants) check(v, await v.run(events));
  await timedRounds(variants, rounds, (v) => v.run(events), check);

  const base = median(variants[0]!.times);
  const rows = variants.map((v) => [
    v.label,
    (median(v.times) * 1000).toFixed(1),
    `${(median(v.times) / base).toFixed(2)}×`,
    ((median(v.times) * 1e9) / events.length).toFixed(0),
    (median(v.cpu) * 1000).toFixed(1),
  ]);
  console.log();
  console.log(table(['variant', 'median ms', 'time vs first', 'ns/event', 'median CPU ms'], rows));
  console.log();
  for (const v of variants) console.log(`  ${v.label}: ${v.times.map((t) => (t * 1000).toFixed(1)).join('  ')}`);
}

await main();
