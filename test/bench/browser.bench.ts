/**
 * Decoding throughput in Chromium: `fromJsonl(response.body)` against what a
 * page writes by hand, on the same fetch body of a large transcript.
 *
 *   drain       the body's chunks read and dropped: the cost of fetch itself (bytes, not events)
 *   baseline    body.pipeThrough(new TextDecoderStream()), split on "\n", JSON.parse per line
 *   fromJsonl   fromJsonl(response.body), counting events (every one validated by io-ts)
 *
 * A Node server on loopback serves the page and the transcript (no-store, so
 * each pass is a real fetch); Debian's Chromium runs the page under
 * playwright-core. One untimed warm-up pass of each, then N rounds, the order
 * of the variants alternating between rounds, a full GC before each pass;
 * times are taken in the page from `fetch` to the last event, with the CPU
 * time of the page's main thread (DevTools `ThreadTime`) beside them, and
 * medians reported. Each variant must count the generator's events, or the script
 * aborts (exit 1). The target is printed as met / missed; the exit code does
 * not depend on it.
 *
 * ```bash
 * npx tsx test/bench/browser.bench.ts                # 100 MB, 9 rounds
 * npx tsx test/bench/browser.bench.ts --mb 20 --rounds 9
 * npx tsx test/bench/browser.bench.ts --smoke        # ~2 MB, 1 round, for CI
 * npx tsx test/bench/browser.bench.ts --mix bytes    # the byte-heavy transcript: tool results of a few KB
 * npx tsx test/bench/browser.bench.ts --breakdown    # also fromJsonl's stages timed one by one, on the body held in memory
 * npx tsx test/bench/browser.bench.ts --profile      # also CPU profiles of one baseline and one fromJsonl pass (test/bench/.data/*.cpuprofile)
 * ```
 */
import { createReadStream, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Page } from 'playwright-core';
import { bundleForBrowser } from '../../examples/web/bundle.js';
import { launchChromium } from '../support/chromium.js';
import { BENCH_GLOBAL, VARIANTS, type BenchPage, type PassResult, type Variant } from './browser/protocol.js';
import { DATA_DIR, largeTranscript } from '../fixtures/producer.js';
import { transcriptMix } from './mix.js';
import { median, table } from './report.js';

const MB = 1_000_000;

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string' },
    mb: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    breakdown: { type: 'boolean', default: false },
    mix: { type: 'string', default: 'text' },
  },
});
const mix = transcriptMix(flags.mix);
const smoke = flags.smoke === true;
const rounds = smoke ? 1 : Number(flags.rounds ?? 9);
const mb = Number(flags.mb ?? (smoke ? 2 : 100));
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a positive integer, got ${flags.rounds}`);
if (!(mb > 0)) throw new Error(`--mb must be > 0, got ${flags.mb}`);

/** The transcript to read: the one place that names the generator, so that another can take its place. */
function benchTranscript(sizeMb: number): { path: string; bytes: number; events: number; reused: boolean } {
  return largeTranscript({ mb: sizeMb, mix });
}

const LABELS: Record<Variant, string> = {
  drain: 'drain: fetch body read, nothing decoded',
  baseline: 'baseline: TextDecoderStream + split + JSON.parse',
  fromJsonl: 'fromJsonl(response.body)',
};

/**
 * The page imports the built package, as an app's bundle would: a source
 * file newer than the last build would be measured as it was, so say so and stop.
 */
function requireFreshBuild(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const built = statSync(join(root, 'dist/.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const stale = ['src', 'operators']
    .flatMap((dir) => readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f)))
    .filter((file) => file.endsWith('.ts') && statSync(join(root, file)).mtimeMs > built);
  if (stale.length > 0) {
    console.error(`${stale[0]} is newer than the build the page would bundle: run npm run build first.`);
    process.exit(1);
  }
}

/** Serves the page, its bundle and the transcript on a free loopback port. */
async function serve(transcriptPath: string, bytes: number): Promise<{ url: string; close(): Promise<void> }> {
  const script = await bundleForBrowser(fileURLToPath(new URL('./browser/page.ts', import.meta.url)));
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><meta charset="utf-8"><title>evosci-rx browser bench</title><script type="module" src="/bench.js"></script>',
      );
    } else if (req.url === '/bench.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      res.end(script);
    } else if (req.url === '/transcript.jsonl') {
      res.writeHead(200, {
        'content-type': 'application/x-ndjson',
        'content-length': bytes,
        'cache-control': 'no-store',
      });
      createReadStream(transcriptPath, { highWaterMark: 1 << 20 }).pipe(res);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A full collection in the page, so that one pass's garbage is not collected on another's clock. */
function collect(page: Page): Promise<void> {
  return page.evaluate((name) => (globalThis as unknown as Record<string, BenchPage>)[name]!.gc(), BENCH_GLOBAL);
}

/** One pass of a variant in the page. */
function pass(page: Page, variant: Variant, url: string): Promise<PassResult> {
  return page.evaluate(
    ([name, variantName, transcriptUrl]) =>
      (globalThis as unknown as Record<string, BenchPage>)[name]!.run(variantName, transcriptUrl),
    [BENCH_GLOBAL, variant, url] as const,
  );
}

/** A CPU profile of one pass, through the DevTools protocol; returns where it was written. */
async function profile(page: Page, url: string, variant: Variant): Promise<string> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  await collect(page);
  await cdp.send('Profiler.start');
  await pass(page, variant, url);
  const { profile: cpuProfile } = await cdp.send('Profiler.stop');
  await cdp.detach();
  const path = `${DATA_DIR}browser-${variant}-${mb}mb-${mix}.cpuprofile`;
  writeFileSync(path, JSON.stringify(cpuProfile));
  return path;
}

async function main(): Promise<void> {
  requireFreshBuild();
  const cpu = cpus();
  console.log(
    `machine: ${cpu[0]?.model ?? 'unknown CPU'} × ${cpu.length} logical CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM`,
  );
  const transcript = benchTranscript(mb);
  console.log(
    `transcript: ${transcript.path} — ${mix} mix, ${(transcript.bytes / MB).toFixed(1)} MB, ${transcript.events} events${transcript.reused ? ' (cached)' : ''}`,
  );

  const server = await serve(transcript.path, transcript.bytes);
  const browser = await launchChromium(['--js-flags=--expose-gc']);
  try {
    const page = await browser.context.newPage();
    await page.goto(server.url);
    await page.waitForFunction((name) => name in globalThis, BENCH_GLOBAL);
    console.log(
      `browser: Chromium ${browser.context.browser()?.version() ?? '?'}, over loopback HTTP from Node ${process.version}`,
    );
    const url = `${server.url}transcript.jsonl`;

    const check = (variant: Variant, result: PassResult) => {
      const expected = variant === 'drain' ? transcript.bytes : transcript.events;
      if (result.events !== expected) {
        console.error(`ABORT: ${LABELS[variant]} counted ${result.events}, expected ${expected}`);
        process.exit(1);
      }
    };
    const times = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
    const cpuTimes = new Map<Variant, number[]>(VARIANTS.map((v) => [v, []]));
    // CPU time of the page's main thread, from DevTools: less moved than wall-clock time by other work on a shared machine.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const threadTime = async () =>
      (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'ThreadTime')?.value ?? NaN;
    console.log(`rounds: 1 warm-up + ${rounds} timed, order alternating between rounds, median reported`);
    for (const variant of VARIANTS) check(variant, await pass(page, variant, url));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
      for (const variant of order) {
        await collect(page);
        const before = await threadTime();
        const result = await pass(page, variant, url);
        cpuTimes.get(variant)!.push((await threadTime()) - before);
        check(variant, result);
        times.get(variant)!.push(result.ms / 1000);
      }
    }
    await cdp.detach();

    const med = (v: Variant) => median(times.get(v)!);
    const cpuMed = (v: Variant) => median(cpuTimes.get(v)!);
    const rows = VARIANTS.map((v) => [
      LABELS[v],
      med(v).toFixed(3),
      (transcript.bytes / MB / med(v)).toFixed(1),
      v === 'drain' ? '—' : Math.round(transcript.events / med(v)).toLocaleString('en-US'),
      v === 'drain' ? '—' : `${(med('baseline') / med(v)).toFixed(2)}×`,
      cpuMed(v).toFixed(3),
      v === 'drain' ? '—' : `${(cpuMed('baseline') / cpuMed(v)).toFixed(2)}×`,
    ]);
    console.log();
    console.log(
      table(
        ['variant', 'median s', 'MB/s', 'events/s', 'throughput vs baseline', 'main-thread CPU s', 'CPU ratio'],
        rows,
      ),
    );
    console.log();
    console.log('each round, wall-clock s (main-thread CPU s):');
    for (const v of VARIANTS)
      console.log(
        `  ${LABELS[v]}: ${times
          .get(v)!
          .map((t, i) => `${t.toFixed(3)} (${cpuTimes.get(v)![i]!.toFixed(3)})`)
          .join('  ')}`,
      );
    const ratio = med('baseline') / med('fromJsonl');
    if (!smoke)
      console.log(
        `\ntarget fromJsonl throughput ≥ 1.1× of baseline: ${ratio.toFixed(2)}× — ${ratio >= 1.1 ? 'met' : 'MISSED'}`,
      );
    if (flags.breakdown) {
      const stages = await page.evaluate(
        ([name, u, n]) => (globalThis as unknown as Record<string, BenchPage>)[name]!.breakdown(u, n),
        [BENCH_GLOBAL, url, Math.max(rounds, 3)] as const,
      );
      console.log('\nstages on the body held in memory, median ms:');
      for (const [stage, ms] of Object.entries(stages)) console.log(`  ${ms.toFixed(0).padStart(6)}  ${stage}`);
    }
    if (flags.profile) {
      for (const variant of ['baseline', 'fromJsonl'] as const)
        console.log(`CPU profile of one ${variant} pass: ${await profile(page, url, variant)}`);
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

await main();
