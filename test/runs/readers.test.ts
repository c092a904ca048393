// A thousand readers of one run cost about one copy of it, not a thousand.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('readers of one run', () => {
  it('hold no copy of it: 1,000 readers, each paused at its own place, grow RSS by less than 2× one copy', () => {
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/runs/readersMemory.ts'], {
      cwd: root,
      encoding: 'utf8',
    });
    const { oneCopy, thousandReaders, runBytes } = JSON.parse(out) as {
      oneCopy: number;
      thousandReaders: number;
      runBytes: number;
    };
    // One copy is the run's own bytes at least: the measure sees the run, not noise.
    expect(oneCopy).toBeGreaterThan(runBytes);
    expect(thousandReaders).toBeLessThan(2 * oneCopy);
  });
});
