// run({ lifeline: true }): the CLI's process group is stopped even when the
// app dies by SIGKILL, and the watchdog goes away with a run that ends.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { run } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/index.js';
import { eventually, gone, isAlive, readWhenWritten, scratch } from '../support/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function lifelinesOf(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
        return argv.some((a) => a.endsWith('lifeline.mjs')) && argv.includes(String(pgid));
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter(isAlive);
}

describe.skipIf(process.platform !== 'linux')('run({ lifeline: true })', () => {
  it('stops the CLI and what it started when the app is killed with SIGKILL', async () => {
    const path = scratch();
    const record = path('cli.json');
    const grandchild = path('grandchild.pid');
    const fake = fakeEvoSci([{ record }, { grandchild }, { hang: true }]);
    const app = `
      import { run } from './src/process/run.ts';
      run({ prompt: 'x', lifeline: true, killGraceMs: 200, command: ${JSON.stringify(fake.command)}, env: ${JSON.stringify(fake.env)} }).subscribe();
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', app], {
      cwd: root,
      stdio: 'ignore',
    });
    const cli = (JSON.parse(await readWhenWritten(record, 10_000)) as { pid: number }).pid;
    const tool = Number(await readWhenWritten(grandchild));
    expect(isAlive(cli) && isAlive(tool)).toBe(true);
    expect(lifelinesOf(cli)).toHaveLength(1);

    child.kill('SIGKILL');
    expect(await gone(cli, 5000)).toBe(true);
    expect(await gone(tool, 5000)).toBe(true);
    expect(await eventually(() => lifelinesOf(cli).length === 0, 5000)).toBe(true);
  }, 30_000);

  it('leaves nothing behind when the run ends by itself', async () => {
    let pid = 0;
    await lastValueFrom(
      run({
        prompt: 'x',
        lifeline: true,
        onSpawn: (p) => (pid = p),
        ...fakeEvoSci([{ sleep: 300 }, { lines: ['{"type": "done", "content": "", "response": ""}'] }]),
      }),
    );
    expect(pid).toBeGreaterThan(0);
    expect(await eventually(() => lifelinesOf(pid).length === 0, 3000)).toBe(true);
  });
});
