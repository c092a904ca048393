/**
 * Decoding throughput of `fromJsonl` against hand-written readers, in one process.
 *
 *   (1) baseline     readline.createInterface({ input: fs.createReadStream(file) }) + JSON.parse per line
 *   (2) parse-only   1 MiB fs reads, split on the newline byte, UTF-8 decode, JSON.parse; no validation
 *   (3) fromJsonl    fromJsonl(fs.createReadStream(file, { highWaterMark: 1 MiB })), counting events
 *   (4) +summarize   (3) piped through summarize()
 *   (5) 64 KiB       fromJsonl(fs.createReadStream(file)): Node's default reads
 *   (6) fromJsonlFile  fromJsonlFile(file): 1 MiB blocks of fs reads
 *
 * One untimed warm-up pass of every variant, then N interleaved rounds
 * (1 2 3 4 1 2 3 4 …) with a full GC before each timed pass; the median of each
 * variant is reported. Every variant must count the same number of events as
 * the generator wrote, or the script aborts (exit 1). No timing assertions: the
 * targets are printed as met / missed, the exit code does not depend on them.
 *
 * ```bash
 * npx tsx test/bench/decode.bench.ts                # 100 MB, 5 rounds
 * npx tsx test/bench/decode.bench.ts --mb 20 --rounds 9
 * npx tsx test/bench/decode.bench.ts --smoke        # ~2 MB, 1 round, for CI
 * npx tsx test/bench/decode.bench.ts --only 3       # one variant (e.g. under node --cpu-prof)
 * ```
 */
import { createReadStream } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { tap, type Observable } from 'rxjs';
import { fromJsonl, type DecodeIssue } from '../../src/index.js';
import { fromJsonlFile } from '../../src/files/fromJsonlFile.js';
import { summarize, type RunSummary } from '../../operators/index.js';
import { largeTranscript } from '../fixtures/producer.js';
import { median, table } from './report.js';
import { timedRounds } from './rounds.js';

const MiB = 1 << 20;
const MB = 1_000_000;
const NEWLINE = 0x0a;

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string' },
    mb: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const smoke = flags.smoke === true;
const rounds = smoke ? 1 : Number(flags.rounds ?? 5);
const mb = Number(flags.mb ?? (smoke ? 2 : 100));
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a positive integer, got ${flags.rounds}`);
if (!(mb > 0)) throw new Error(`--mb must be > 0, got ${flags.mb}`);
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

/** (6) The library's own file reader. */
function libraryFile(file: string): Promise<number> {
  return count((onDiagnostic) => fromJsonlFile(file, { onDiagnostic }));
}

/**
 * (4) The library and the summary operator; events counted before the
 * operator, and checked against the summary's own `events` count.
 */
async function withSummary(file: string): Promise<number> {
  let events = 0;
  let summary: RunSummary | undefined;
  const emitted = await count(
    (onDiagnostic) =>
      fromJsonl(createReadStream(file, { highWaterMark: MiB }), { onDiagnostic }).pipe(
        tap(() => events++),
        summarize(),
      ),
    (value) => (summary = value as RunSummary),
  );
  if (emitted !== 1) throw new Error(`summarize() emitted ${emitted} values, expected 1`);
  if (summary?.events !== events) throw new Error(`summarize() reports ${summary?.events} events, ${events} went in`);
  return events;
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
  const transcript = largeTranscript({ mb });
  const size = transcript.bytes;
  console.log(
    `transcript: ${transcript.path} — ${(size / MB).toFixed(1)} MB, ${transcript.events} events` +
      (transcript.reused ? ' (cached)' : ` (generated in ${((performance.now() - started) / 1000).toFixed(1)} s)`),
  );

  const variants: Variant[] = [
    { id: 1, label: '(1) readline + JSON.parse', run: baseline, times: [], cpu: [] },
    { id: 2, label: '(2) parse-only floor', run: parseOnly, times: [], cpu: [] },
    { id: 3, label: '(3) fromJsonl', run: library, times: [], cpu: [] },
    { id: 4, label: '(4) fromJsonl + summarize()', run: withSummary, times: [], cpu: [] },
    { id: 5, label: '(5) fromJsonl, 64 KiB reads', run: library64k, times: [], cpu: [] },
    { id: 6, label: '(6) fromJsonlFile', run: libraryFile, times: [], cpu: [] },
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

  const t3 = med.get(3);
  if (!smoke && t3 !== undefined) {
    console.log();
    if (t1 !== undefined) {
      const r = t1 / t3;
      console.log(`target (3) throughput ≥ 1.0× of (1): ${x(r)} — ${r >= 1 ? 'met' : 'MISSED'}`);
    }
    if (t2 !== undefined) {
      const r = t3 / t2;
      console.log(`target (3) time ≤ 1.4× of (2):       ${x(r)} — ${r <= 1.4 ? 'met' : 'MISSED'}`);
    }
  }
  const t4 = med.get(4);
  if (!smoke && t4 !== undefined && t1 !== undefined) {
    const r = t1 / t4;
    console.log(`target (4) throughput ≥ 0.8× of (1): ${x(r)} — ${r >= 0.8 ? 'met' : 'MISSED'}`);
  }
}

await main();
