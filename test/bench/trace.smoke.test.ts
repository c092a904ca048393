// trace.bench.ts as CI runs the benchmarks: once, on a small input; its figures are not asserted.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('benchmark smoke', () => {
  it('trace.bench.ts measures traceRun with no SDK and with the real SDK on the same events', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/bench/trace.bench.ts', '--smoke'],
      { cwd: root, timeout: 60_000 },
    );
    for (const variant of ['(a) fromJsonl + summarize()', '(b) + traceRun(), no-op API', '(c) + traceRun(), real SDK'])
      expect(stdout).toMatch(new RegExp(`\\| ${variant.replace(/[()+]/g, '\\$&')} +\\| +[\\d.]+ \\| +[\\d.]+× \\|`));
  }, 60_000);
});
