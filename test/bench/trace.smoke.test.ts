// trace.bench.ts, summarize.bench.ts, eachEvent.bench.ts and against.bench.ts as CI runs the benchmarks: once, on a small input; their figures are not asserted.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bench = (file: string, ...args: string[]) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', `test/bench/${file}`, '--smoke', ...args], {
    cwd: root,
    timeout: 60_000,
  });
/** A table row of the variant, with its figures. */
const row = (variant: string) =>
  new RegExp(`\\| ${variant.replace(/[()+:]/g, '\\$&')} +\\| +[\\d.]+ \\| +[\\d.]+× \\|`);

describe('benchmark smoke', () => {
  it('trace.bench.ts measures traceRun with no SDK and with the real SDK on the same events', async () => {
    const { stdout } = await bench('trace.bench.ts');
    for (const variant of ['(a) fromJsonl + summarize()', '(b) + traceRun(), no-op API', '(c) + traceRun(), real SDK'])
      expect(stdout).toMatch(row(variant));
  }, 60_000);

  it('summarize.bench.ts measures summarize() and a hand-written tally on the same decoded events', async () => {
    const { stdout } = await bench('summarize.bench.ts');
    for (const variant of ['(1) hand-written tally', '(2) RunModel, no Rx', '(3) summarize()', '(4) Rx floor: count()'])
      expect(stdout).toMatch(row(variant));
  }, 60_000);

  it('against.bench.ts measures summarize() and the traced pipeline against another checkout, here this one', async () => {
    const { stdout } = await bench('against.bench.ts', '--against', root);
    for (const pipeline of ['summarize()', 'traceRun() + summarize(), real SDK'])
      expect(stdout).toMatch(
        new RegExp(`\\| ${pipeline.replace(/[()+]/g, '\\$&')} +\\| +2 \\| +[\\d.]+ → [\\d.]+ \\([\\d.]+×\\) \\|`),
      );
  }, 60_000);

  it('eachEvent.bench.ts measures eachEvent and its queue against their floors on the same decoded events', async () => {
    const { stdout } = await bench('eachEvent.bench.ts');
    for (const variant of ['(1) async generator', '(2) eachEvent', '(3) Fifo alone', '(4) array alone'])
      expect(stdout).toMatch(row(variant));
  }, 60_000);
});
