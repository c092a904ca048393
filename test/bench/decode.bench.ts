/**
 * Decoding throughput of `fromJsonl` against hand-written readers, in one process.
 *
 *   (1) baseline     readline.createInterface({ input: fs.createReadStream(file) }) + JSON.parse per line
 *   (2) parse-only   1 MiB fs reads, split on the newline byte, UTF-8 decode, JSON.parse; no validation
 *   (3) fromJsonl    fromJsonl(fs.createReadStream(file, { highWaterMark: 1 MiB })), counting events
 *   (4) +summarize   fromJsonlFile(file) piped through summarize()
 *   (5) 64 KiB       fromJsonl(fs.createReadStream(file)): Node's default reads
 *   (6) fromJsonlFile  fromJsonlFile(file): fs reads of 1 MiB into one buffer, reused for every read
 *   (8) imperative   (1) and a hand-written loop computing the same RunSummary (handTally.ts), held to its figures
 *
 * One untimed warm-up pass of every variant, then N interleaved rounds
 * (1 2 3 4 1 2 3 4 …) with a full GC before each timed pass; the median of each
 * variant is reported. Every variant must count the same number of events as
 * the generator wrote, and (8) must give the figures (4) gives, or the script
 * aborts (exit 1). No timing assertions: the targets are printed as met /
 * missed, the exit code does not depend on them.
 *
 * ```bash
 * npx tsx test/bench/decode.bench.ts                # 100 MB, 5 rounds
 * npx tsx test/bench/decode.bench.ts --mb 20 --rounds 9
 * npx tsx test/bench/decode.bench.ts --smoke        # ~2 MB, 1 round, for CI
 * npx tsx test/bench/decode.bench.ts --only 3       # one variant (e.g. under node --cpu-prof)
 * npx tsx test/bench/decode.bench.ts --mix bytes    # the byte-heavy transcript: tool results of a few KB
 * ```
 */
import { createReadStream } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { tap, type Observable } from 'rxjs';
import { fromJsonl, type DecodeIssue, type EvoEvent } from '../../src/index.js';
import { fromJsonlFile } from '../../src/files/fromJsonlFile.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { largeTranscript } from '../fixtures/producer.js';
import { transcriptMix } from './mix.js';
import { median, table } from './report.js';
import { timedRounds } from './rounds.js';
import { figuresOf, type Figures } from './figures.js';
import { HandTally } from './handTally.js';

const MiB = 1 << 20;
const MB = 1_000_000;
const NEWLINE = 0x0a;

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string' },
    mb: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    only: { type: 'string' },
    mix: { type: 'string', default: 'text' },
  },
});
const smoke = flags.smoke === true;
const rounds = smoke ? 1 : Number(flags.rounds ?? 5);
const mb = Number(flags.mb ?? (smoke ? 2 : 100));
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a positive integer, got ${flags.rounds}`);
if (!(mb > 0)) throw new Error(`--mb must be > 0, got ${flags.mb}`);
const mix = transcriptMix(flags.mix);
const only = flags.only === undefined ? undefined : new Set(flags.only.split(',').map((s) => Number(s.trim())));

// --- the variants ---------------------------------------------------------------------

/** (1) What a client writes by hand: readline (64 KiB default reads) + JSON.parse. */
function baseline(file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const input = createReadStream(file);
    input.on('error', reject);
    const lines = createInterface({ input, crlfDelay: Infinity });
    let events = 0;
    lines.on('line', (line) => {
      if (line.length === 0) return;
      const value = JSON.parse(line) as { type?: unknown };
      if (typeof value.type === 'string') events++;
    });
    lines.on('close', () => resolve(events));
  });
}

/** (2) The floor: big reads, byte split, decode and JSON.parse each line, nothing else. */
async function parseOnly(file: string): Promise<number> {
  let events = 0;
  let carry: Buffer[] = [];
  const parse = (text: string): void => {
    if (text.length === 0) return;
    const value = JSON.parse(text) as { type?: unknown };
    if (typeof value.type === 'string') events++;
  };
  for await (const chunk of createReadStream(file, { highWaterMark: MiB }) as AsyncIterable<Buffer>) {
    let start = 0;
    let end = chunk.indexOf(NEWLINE);
    while (end !== -1) {
      if (carry.length > 0) {
        carry.push(chunk.subarray(0, end));
        parse(Buffer.concat(carry).toString('utf8'));
        carry = [];
      } else parse(chunk.toString('utf8', start, end));
      start = end + 1;
      end = chunk.indexOf(NEWLINE, start);
    }
    if (start < chunk.length) carry.push(Buffer.from(chunk.subarray(start)));
  }
  if (carry.length > 0) parse(Buffer.concat(carry).toString('utf8'));
  return events;
}

/** Subscribes, counts values (and diagnostics, which must stay at zero). */
function count(
  events$: (onDiagnostic: (issue: DecodeIssue) => void) => Observable<unknown>,
  last?: (value: unknown) => void,
): Promise<number> {
  return new Promise((resolve, reject) => {
    let events = 0;
    let firstIssue: DecodeIssue | undefined;
    const onDiagnostic = (issue: DecodeIssue): void => {
      firstIssue ??= issue;
    };
    events$(onDiagnostic).subscribe({
      next: (value) => {
        events++;
        last?.(value);
      },
      error: reject,
      complete: () =>
        firstIssue ? reject(new Error(`unexpected diagnostic: ${firstIssue.toString()}`)) : resolve(events),
    });
  });
}

/** (3) The library. */
function library(file: string): Promise<number> {
  return count((onDiagnostic) => fromJsonl(createReadStream(file, { highWaterMark: MiB }), { onDiagnostic }));
}

/** (5) The library on Node's default 64 KiB stream reads. */
function library64k(file: string): Promise<number> {
  return count((onDiagnostic) => fromJsonl(createReadStream(file), { onDiagnostic }));
}

/** (6) The library's own file reader: against (3), a reused buffer against a stream's new one per read. */
function libraryFile(file: string): Promise<number> {
  return count((onDiagnostic) => fromJsonlFile(file, { onDiagnostic }));
}

/** The figures of the last summary (4) made, for (8) to be held to. */
let summarized: Figures | undefined;

/**
 * (4) The library's file reader and the summary operator; events counted
 * before the operator, and checked against the summary's own `events` count.
 */
async function withSummary(file: string): Promise<number> {
  let events = 0;
  let summary: RunSummary | undefined;
  const emitted = await count(
    (onDiagnostic) =>
      fromJsonlFile(file, { onDiagnostic }).pipe(
        tap(() => events++),
        summarize(),
      ),
    (value) => (summary = value as RunSummary),
  );
  if (emitted !== 1) throw new Error(`summarize() emitted ${emitted} values, expected 1`);
  if (summary?.events !== events) throw new Error(`summarize() reports ${summary?.events} events, ${events} went in`);
  summarized ??= figuresOf(summary);
  return events;
}

/** (8) What a client writes by hand for a summary: readline, JSON.parse, and a loop of counters. */
function imperative(file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const input = createReadStream(file);
    input.on('error', reject);
    const lines = createInterface({ input, crlfDelay: Infinity });
    const tally = new HandTally(Date.now);
    lines.on('line', (line) => {
      if (line.length > 0) tally.push(JSON.parse(line) as EvoEvent);
    });
    lines.on('close', () => {
      const figures = figuresOf(tally.summary());
      if (summarized !== undefined && !isDeepStrictEqual(figures, summarized)) {
        reject(new Error('the hand-written tally and summarize() disagree'));
      } else resolve(figures.events);
    });
  });
}

// --- the run ---------------------------------------------------------------------------

interface Variant {
  readonly id: number;
  readonly label: string;
  readonly run: (file: string) => Promise<number>;
  /** Wall-clock seconds of each timed pass. */
  readonly times: number[];
  /** Process CPU seconds (user + system, all threads) of each timed pass: less sensitive to a busy shared machine. */
  readonly cpu: number[];
}

async function main(): Promise<void> {
  const cpu = cpus();
  console.log(
    `machine: ${cpu[0]?.model ?? 'unknown CPU'} × ${cpu.length} logical CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
  );
  console.log(`runtime: node ${process.version} (V8 ${process.versions.v8}), ${process.platform}/${process.arch}`);

  const started = performance.now();
  const transcript = largeTranscript({ mb, mix });
  const size = transcript.bytes;
  console.log(
    `transcript: ${transcript.path} — ${mix} mix, ${(size / MB).toFixed(1)} MB, ${transcript.events} events` +
      (transcript.reused ? ' (cached)' : ` (generated in ${((performance.now() - started) / 1000).toFixed(1)} s)`),
  );

  const variants: Variant[] = [
    { id: 1, label: '(1) readline + JSON.parse', run: baseline, times: [], cpu: [] },
    { id: 2, label: '(2) parse-only floor', run: parseOnly, times: [], cpu: [] },
    { id: 3, label: '(3) fromJsonl', run: library, times: [], cpu: [] },
    { id: 4, label: '(4) fromJsonlFile + summarize()', run: withSummary, times: [], cpu: [] },
    { id: 5, label: '(5) fromJsonl, 64 KiB reads', run: library64k, times: [], cpu: [] },
    { id: 6, label: '(6) fromJsonlFile', run: libraryFile, times: [], cpu: [] },
    { id: 8, label: '(8) imperative: readline + JSON.parse + hand tally', run: imperative, times: [], cpu: [] },
  ];
  const active = variants.filter((v) => only === undefined || only.has(v.id));
  if (active.length === 0) throw new Error(`--only ${flags.only}: no such variant`);

  const check = (v: Variant, events: number): void => {
    if (events !== transcript.events) {
      console.error(`ABORT: ${v.label} counted ${events} events, the transcript has ${transcript.events}`);
      process.exit(1);
    }
  };

  console.log(
    `rounds: 1 warm-up + ${rounds} timed, interleaved (${active.map((v) => v.id).join(' ')} …), median reported`,
  );
  for (const v of active) check(v, await v.run(transcript.path));
  if (summarized !== undefined && active.some((v) => v.id === 8))
    console.log('(8) gives the figures of summarize() in (4): outcome, response, text, usage, counts, invocations, …');
  await timedRounds(active, rounds, (v) => v.run(transcript.path), check);

  const med = new Map(active.map((v) => [v.id, median(v.times)]));
  const t1 = med.get(1);
  const t2 = med.get(2);
  const x = (n: number): string => `${n.toFixed(2)}×`;
  const rows = active.map((v) => {
    const t = med.get(v.id)!;
    return [
      v.label,
      t.toFixed(3),
      (size / MB / t).toFixed(1),
      Math.round(transcript.events / t).toLocaleString('en-US'),
      t1 === undefined ? '—' : x(t1 / t),
      t2 === undefined ? '—' : x(t / t2),
      median(v.cpu).toFixed(3),
    ];
  });
  console.log();
  console.log(
    table(['variant', 'median s', 'MB/s', 'events/s', 'throughput vs (1)', 'time vs (2)', 'median CPU s'], rows),
  );
  console.log();
  console.log('each round, wall-clock s (CPU s):');
  for (const v of active)
    console.log(`  ${v.label}: ${v.times.map((t, i) => `${t.toFixed(3)} (${v.cpu[i]!.toFixed(3)})`).join('  ')}`);

  if (!smoke) targets(active, med);
}

/**
 * The targets of issue #23, as ratios of throughput (time of the slower over
 * time of the faster): of wall-clock medians, and of CPU-time medians, which
 * other work on a shared machine moves less.
 */
function targets(active: readonly Variant[], med: ReadonlyMap<number, number>): void {
  const cpuMed = new Map(active.map((v) => [v.id, median(v.cpu)]));
  const wanted: [number, number, number][] = [
    [6, 1, 1.6],
    [4, 1, 1.3],
    [4, 8, 1.2],
  ];
  console.log();
  for (const [fast, slow, goal] of wanted) {
    const [tf, ts, cf, cs] = [med.get(fast), med.get(slow), cpuMed.get(fast), cpuMed.get(slow)];
    if (tf === undefined || ts === undefined || cf === undefined || cs === undefined) continue;
    const r = ts / tf;
    console.log(
      `target (${fast}) throughput ≥ ${goal.toFixed(1)}× of (${slow}): ${r.toFixed(2)}× (CPU time ${(cs / cf).toFixed(2)}×) — ${r >= goal ? 'met' : 'MISSED'}`,
    );
  }
}

await main();
