// CI runs the benchmarks only as a seconds-long smoke: they must run and
// report, on small inputs; their figures are not asserted.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { hasChromium } from '../support/chromium.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bench = (file: string, ...args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', `test/bench/${file}`, '--smoke', ...args], {
    cwd: root,
    timeout: 110_000,
  });

describe('benchmark smoke', () => {
  it('decode.bench.ts measures every variant on the same events', async () => {
    const { stdout } = await bench('decode.bench.ts');
    for (const variant of [
      '(1) readline',
      '(2) parse-only',
      '(3) fromJsonl',
      '(4) fromJsonlFile + summarize()',
      '(6) fromJsonlFile',
      '(8) imperative',
    ])
      expect(stdout).toContain(variant);
    expect(stdout).toContain('(8) gives the figures of summarize() in (4)');
  }, 60_000);

  it('decode.bench.ts and summarize.bench.ts read the byte-heavy transcript with --mix bytes', async () => {
    const decode = await bench('decode.bench.ts', '--mix', 'bytes', '--only', '1,4,8');
    expect(decode.stdout).toMatch(/transcript: .* bytes mix/);
    expect(decode.stdout).toContain('(8) gives the figures of summarize() in (4)');
    const summary = await bench('summarize.bench.ts', '--mix', 'bytes');
    expect(summary.stdout).toMatch(/transcript: bytes mix/);
    expect(summary.stdout).toMatch(/\(3\) summarize\(\) +\| +[\d.]+ \|/);
  }, 60_000);

  it('latency.bench.ts measures every event', async () => {
    const { stdout } = await bench('latency.bench.ts');
    expect(stdout).toMatch(/p50 [\d.]+ ms {3}p90 [\d.]+ ms {3}p99 [\d.]+ ms/);
  }, 60_000);

  it('jetstream.bench.ts measures both variants and the latency of each', async () => {
    const { stdout } = await bench('jetstream.bench.ts');
    expect(stdout).toMatch(/\(raw\) .* [\d,]+ events\/s/);
    expect(stdout).toMatch(/\(ours\) .* [\d,]+ events\/s/);
    expect(stdout).toMatch(/ratio \(ours \/ raw\): [\d.]+×/);
    expect(stdout.match(/^latency \((raw |ours)\) .* p99 [\d.]+ ms/gm)).toHaveLength(2);
  }, 60_000);

  it('jetstream.bench.ts --rtt measures both variants at each round-trip time through a delay proxy', async () => {
    const { stdout } = await bench('jetstream.bench.ts', '--rtt', '0,10');
    for (const rtt of [0, 10]) {
      // Published and read back, then the latency.
      expect(
        stdout.match(new RegExp(`^\\| ${rtt} ms +\\| +[\\d,]+ \\| +[\\d,]+ \\| +[\\d.]+× \\|$`, 'gm')),
      ).toHaveLength(2);
      expect(stdout).toMatch(new RegExp(`^\\| ${rtt} ms +\\|( +[\\d.]+ ms \\|){4}$`, 'm'));
    }
  }, 120_000);

  it('jetstream-large.bench.ts stores and reads back large events, ours against the raw client', async () => {
    const { stdout } = await bench('jetstream-large.bench.ts');
    const row = (variant: string) =>
      new RegExp(
        `^\\| \\(${variant}\\) .*\\| +[\\d.]+ s \\| +[\\d.]+ MB/s \\| +[\\d.]+ s \\| +[\\d.]+ MB/s \\|$`,
        'gm',
      );
    expect(stdout.match(row('raw'))).toHaveLength(1);
    expect(stdout.match(row('ours'))).toHaveLength(2);
  }, 120_000);

  it("failover.bench.ts times a killed worker's run to its next attempt and its end", async () => {
    const { stdout } = await bench('failover.bench.ts');
    expect(stdout).toMatch(/^\| 1 +\| +[\d.]+ s \| +[\d.]+ s \| +[\d.]+ s \| +[\d.]+ s \|$/m);
    expect(stdout).toMatch(/kill → started\(2\) +min [\d.]+ s {3}median [\d.]+ s {3}max [\d.]+ s/);
  }, 120_000);

  it('cluster.bench.ts measures R1 against R3 and a leader move before and after', async () => {
    const { stdout } = await bench('cluster.bench.ts');
    expect(stdout).toMatch(/^\| \(R1\) +\| +[\d,]+ \|$/m);
    expect(stdout).toMatch(/^\| \(R3\) +\| +[\d,]+ \|$/m);
    expect(stdout).toMatch(/ratio \(R3 \/ R1\): [\d.]+×/);
    expect(stdout.match(/^\| \((now|before)\) .*\| +\d+ ms \| +\d+ ms \|$/gm)).toHaveLength(2);
    expect(stdout).toMatch(/ratio \(before \/ now\): [\d.]+×/);
  }, 120_000);

  it('hub.bench.ts serves one run to readers in another process from the floor and each hub', async () => {
    const { stdout } = await bench('hub.bench.ts');
    for (const kind of ['floor', 'memory', 'dir', 'jetstream']) expect(stdout).toMatch(new RegExp(`^${kind}$`, 'm'));
    // Per hub, a replay and a live row: events/s, the ratio to the floor, KiB per reader at peak; live with its p99
    // and the KiB per reader held after GC mid-run (heapUsed + external / RSS).
    expect(stdout.match(/^\| 20 replay +\| +[\d,]+ \| +[\d.]+× \| +[\d.,-]+ \|/gm)).toHaveLength(4);
    expect(
      stdout.match(/^\| 20 live +\| +[\d,]+ \| +[\d.]+× \| +[\d.,-]+ \| +[\d.,]+ ms \| +-?[\d.,]+ \/ -?[\d.,]+ \|/gm),
    ).toHaveLength(4);
    // The JetStream hub's rows say how many consumers its readers held on the broker, and what the hub took in.
    expect(stdout).toMatch(/^\| 20 live .*\| +\d+ \/ [\d,]+ \/ ([\d.,-]+|–) \|$/m);
  }, 120_000);

  it('memory.bench.ts measures each variant in its own process', async () => {
    const { stdout } = await bench('memory.bench.ts');
    // readline, fromJsonl + operators, fromJsonlFile + summarize(), one long line.
    expect(stdout.match(/^\| (readline|fromJsonl)/gm)).toHaveLength(4);
  }, 60_000);

  // Chromium is what CI installs; without it there is no browser to measure in.
  it.skipIf(!hasChromium)(
    'browser.bench.ts measures every variant in Chromium on the same bytes',
    async () => {
      const { stdout } = await bench('browser.bench.ts');
      for (const variant of ['drain:', 'baseline: TextDecoderStream', 'fromJsonl(response.body)'])
        expect(stdout).toContain(variant);
      expect(stdout).toMatch(/fromJsonl\(response\.body\) +\| +[\d.]+ \| +[\d.]+ \| +[\d,]+ \| +[\d.]+× \|/);
    },
    60_000,
  );

  it.skipIf(!hasChromium)(
    'browser.bench.ts reads the byte-heavy transcript with --mix bytes',
    async () => {
      const { stdout } = await bench('browser.bench.ts', '--mix', 'bytes');
      expect(stdout).toMatch(/transcript: .* bytes mix/);
      expect(stdout).toMatch(/fromJsonl\(response\.body\) +\| +[\d.]+ \| +[\d.]+ \| +[\d,]+ \| +[\d.]+× \|/);
    },
    60_000,
  );
});
