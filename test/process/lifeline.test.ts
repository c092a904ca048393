// run({ lifeline: true }): the CLI's process group is stopped even when the
// app dies by SIGKILL, bundled into one file or not; the watchdog goes away
// with a run that ends; a watchdog that cannot start fails the run.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SpawnError } from '../../src/events/errors.js';
import { LIFELINE_MARKER } from '../../src/process/lifeline.js';
import { run } from '../../src/process/run.js';
import { fakeEvoSci } from '../../testing/index.js';
import { eventually, gone, isAlive, readWhenWritten, scratch } from '../support/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Processes alive whose environment holds `text`: the fake CLI carries its script there. */
function processesWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/environ`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter(isAlive);
}

/** Starts `app` (the source of an app) with node, bundled into one file or through tsx; its CLI's pid and the grandchild's. */
async function startApp(app: string, bundled: 'esm' | 'cjs' | undefined) {
  const path = scratch();
  const record = path('cli.json');
  const grandchild = path('grandchild.pid');
  const fake = fakeEvoSci([{ record }, { grandchild }, { hang: true }]);
  const source = app
    .replace('FAKE_COMMAND', JSON.stringify(fake.command))
    .replace('FAKE_ENV', JSON.stringify(fake.env))
    .replace('RUN_MODULE', JSON.stringify(bundled ? `${root}src/process/run.ts` : './src/process/run.ts'));
  let argv = ['--import', 'tsx', '--input-type=module', '-e', source];
  if (bundled) {
    // One file in a directory of its own: nothing of the package beside it.
    const outfile = path(bundled === 'esm' ? 'app.mjs' : 'app.cjs');
    await build({
      stdin: { contents: source, loader: 'ts', resolveDir: dirname(outfile) },
      bundle: true,
      platform: 'node',
      format: bundled,
      outfile,
      logLevel: 'silent',
      // What an ES module bundle needs for the CommonJS packages in it, as esbuild's documentation gives it.
      ...(bundled === 'esm' && {
        banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      }),
    });
    argv = [outfile];
  }
  const child = spawn(process.execPath, argv, { cwd: bundled ? dirname(record) : root, stdio: 'ignore' });
  const cli = (JSON.parse(await readWhenWritten(record, 20_000)) as { pid: number }).pid;
  const tool = Number(await readWhenWritten(grandchild));
  return { child, cli, tool };
}

const APP = `
  import { run } from RUN_MODULE;
  run({ prompt: 'x', lifeline: true, killGraceMs: 200, command: FAKE_COMMAND, env: FAKE_ENV }).subscribe();
  setInterval(() => {}, 1000);`;

function lifelinesOf(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const argv = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
        return argv.includes(LIFELINE_MARKER) && argv.includes(String(pgid));
      } catch {
        return false;
      }
    })
    .map(Number)
    .filter(isAlive);
}

describe.skipIf(process.platform !== 'linux')('run({ lifeline: true })', () => {
  it.each([
    ['run from its modules', undefined],
    ['bundled into one ES module by esbuild', 'esm'],
    ['bundled into one CommonJS file by esbuild', 'cjs'],
  ] as const)(
    'stops the CLI and what it started when the app, %s, is killed with SIGKILL',
    async (_, bundled) => {
      const { child, cli, tool } = await startApp(APP, bundled);
      expect(isAlive(cli) && isAlive(tool)).toBe(true);
      expect(await eventually(() => lifelinesOf(cli).length === 1)).toBe(true);

      child.kill('SIGKILL');
      expect(await gone(cli)).toBe(true);
      expect(await gone(tool)).toBe(true);
      expect(await eventually(() => lifelinesOf(cli).length === 0)).toBe(true);
    },
    60_000,
  );

  it('fails the run with SpawnError, and stops the CLI, when the watchdog cannot start', async () => {
    const marker = `unguarded-${process.pid}-${Date.now()}`;
    const fake = fakeEvoSci([{ stderr: marker }, { hang: true }]);
    const execPath = process.execPath;
    process.execPath = `${scratch()('no-node')}`;
    let error: unknown;
    try {
      await lastValueFrom(run({ prompt: 'x', lifeline: true, ...fake, env: { ...fake.env, MARKER: marker } }));
    } catch (err) {
      error = err;
    } finally {
      process.execPath = execPath;
    }
    expect(error).toBeInstanceOf(SpawnError);
    expect((error as Error).message).toMatch(/could not start the lifeline watchdog/);
    expect(await eventually(() => processesWith(marker).length === 0)).toBe(true);
  });

  it('warns when the watchdog started but ended before the run', async () => {
    const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
    const fake = fakeEvoSci([{ sleep: 10_000 }]);
    const execPath = process.execPath;
    // An executable that starts and exits 1 at once: a watchdog that does not stay.
    process.execPath = '/bin/false';
    let subscription;
    try {
      subscription = run({ prompt: 'x', lifeline: true, ...fake }).subscribe({ error: () => undefined });
    } finally {
      process.execPath = execPath;
    }
    try {
      expect((await warned).message).toMatch(/^the lifeline of process group \d+ ended \(exit code 1\)/);
    } finally {
      subscription.unsubscribe();
    }
  });

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
    expect(await eventually(() => lifelinesOf(pid).length === 0)).toBe(true);
  });
});
