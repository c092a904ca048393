// Every TypeScript block of README.md is a program: compiled, then run against the fake CLI.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';
import { natsUrl } from '../support/natsServer.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
// A folder of this run's own, beside the repo's node_modules: another copy of the suite has its own.
const folder = mkdtempSync(join(root, 'test/examples/.readme-'));
const exec = promisify(execFile);

/** The processes the blocks ran in. */
const blockPids = new Set<number>();

const blocks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
const file = (i: number) => join(folder, `block-${String(i + 1).padStart(2, '0')}.ts`);

describe('README.md', () => {
  beforeAll(async () => {
    blocks.forEach((code, i) => writeFileSync(file(i), code));
    // Types are checked by the first test; the blocks run as plain JavaScript, one esbuild call for all.
    await build({
      entryPoints: blocks.map((_, i) => file(i)),
      outdir: folder,
      outExtension: { '.js': '.mjs' },
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'error',
    });
    writeFileSync(
      join(folder, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../../tsconfig.json',
        compilerOptions: { noEmit: true, incremental: false, rootDir: '.', lib: ['ES2023', 'DOM'] },
        include: ['*.ts'],
      }),
    );
  });

  afterAll(async () => {
    // The JetStream block names its streams after its process: remove what this file's blocks made,
    // and nothing of another copy of the suite running beside it.
    const nc = await connect({ servers: natsUrl() });
    const jsm = await jetstreamManager(nc);
    for await (const stream of jsm.streams.list()) {
      const pid = /^README(\d+)_/.exec(stream.config.name)?.[1];
      if (pid !== undefined && blockPids.has(Number(pid))) await jsm.streams.delete(stream.config.name);
    }
    await nc.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('has TypeScript blocks, and they all compile', async () => {
    expect(blocks.length).toBeGreaterThan(10);
    const tsc = join(root, 'node_modules/.bin/tsc');
    const result = await exec(tsc, ['-p', join(folder, 'tsconfig.json')], { cwd: root }).catch(
      (err: { stdout: string }) => err,
    );
    expect(result.stdout).toBe('');
  });

  it.concurrent.each(blocks.map((code, i) => [i + 1, code.split('\n')[0]!] as const))(
    'block %i (%s …) runs to its end against the fake CLI',
    async (n) => {
      const { command, env } = fakeEvoSci([
        { stderr: 'Loading agent…' },
        { transcript: join(root, 'examples/transcripts/demo-run.jsonl') },
        { resumeHint: '4e1f9a2b' },
      ]);
      const block = exec(process.execPath, [file(n - 1).replace(/\.ts$/, '.mjs')], {
        cwd: root,
        env: { ...process.env, ...env, EVOSCI_BIN: command, NO_COLOR: '1' },
        timeout: 60_000,
      });
      if (block.child.pid !== undefined) blockPids.add(block.child.pid);
      const { stdout } = await block;
      // Each block prints what it shows.
      expect(stdout.trim()).not.toBe('');
    },
  );
});
