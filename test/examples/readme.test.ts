// Every TypeScript block of README.md is a program: compiled, then run against the fake CLI.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { fakeEvoSci } from '../../testing/fakeEvoSci.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const folder = join(root, 'test/examples/.readme');
const exec = promisify(execFile);

const blocks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
const file = (i: number) => join(folder, `block-${String(i + 1).padStart(2, '0')}.ts`);

describe('README.md', () => {
  beforeAll(() => {
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    blocks.forEach((code, i) => writeFileSync(file(i), code));
    writeFileSync(
      join(folder, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../../tsconfig.json',
        compilerOptions: { noEmit: true, rootDir: '.', lib: ['ES2023', 'DOM'] },
        include: ['*.ts'],
      }),
    );
  });

  afterAll(async () => {
    // The JetStream block names its streams after its process: remove what it made.
    const nc = await connect({ servers: '127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    for await (const stream of jsm.streams.list()) {
      if (/^README\d+_/.test(stream.config.name)) await jsm.streams.delete(stream.config.name);
    }
    await nc.close();
  });

  it('has TypeScript blocks, and they all compile', async () => {
    expect(blocks.length).toBeGreaterThan(10);
    const tsc = join(root, 'node_modules/.bin/tsc');
    const result = await exec(tsc, ['-p', join(folder, 'tsconfig.json')], { cwd: root }).catch(
      (err: { stdout: string }) => err,
    );
    expect(result.stdout).toBe('');
  });

  it.each(blocks.map((code, i) => [i + 1, code.split('\n')[0]!] as const))(
    'block %i (%s …) runs to its end against the fake CLI',
    async (n) => {
      const { command, env } = fakeEvoSci([
        { stderr: 'Loading agent…' },
        { transcript: join(root, 'examples/transcripts/demo-run.jsonl') },
        { resumeHint: '4e1f9a2b' },
      ]);
      const { stdout } = await exec(process.execPath, ['--import', 'tsx', file(n - 1)], {
        cwd: root,
        env: { ...process.env, ...env, EVOSCI_BIN: command, NO_COLOR: '1' },
        timeout: 60_000,
      });
      // Each block prints what it shows.
      expect(stdout.trim()).not.toBe('');
    },
  );
});
