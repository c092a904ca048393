// Every TypeScript block of the front page (README.md) and of each guide (docs/*.md) is a program: compiled, then
// run against the fake CLI.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
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

const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** One ```ts block: its page, its number there (from 1), its code, and the file it is compiled from. */
interface Block {
  page: string;
  n: number;
  code: string;
  file: string;
}

/** A page's files are named after it: `readme-01.ts`, `docs-operators-03.ts`. */
const stemOf = (page: string) =>
  page
    .replace(/\.md$/, '')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .toLowerCase();
const blocks: Block[] = pages.flatMap((page) =>
  [...readFileSync(join(root, page), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m, i) => ({
    page,
    n: i + 1,
    code: m[1]!,
    file: join(folder, `${stemOf(page)}-${String(i + 1).padStart(2, '0')}.ts`),
  })),
);

/** tsc's report on every block at once, one entry per diagnostic; started by the first page that asks. */
let typecheck: Promise<string[]> | undefined;
const diagnostics = () =>
  (typecheck ??= exec(join(root, 'node_modules/.bin/tsc'), ['-p', join(folder, 'tsconfig.json')], { cwd: root })
    .catch((err: { stdout: string }) => err)
    .then(({ stdout }) => stdout.split(/\n(?=\S)/).filter((entry) => entry.trim() !== '')));
/** The diagnostics about one page's blocks. */
const diagnosticsOf = (page: string, all: string[]) =>
  all.filter((entry) => new RegExp(`(^|/)${stemOf(page)}-\\d+\\.ts\\(`).test(entry));

beforeAll(async () => {
  for (const { file, code } of blocks) writeFileSync(file, code);
  // Types are checked by each page's first test; the blocks run as plain JavaScript, one esbuild call for all.
  await build({
    entryPoints: blocks.map(({ file }) => file),
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
    const pid = /^[A-Z]+(\d+)_/.exec(stream.config.name)?.[1];
    if (pid !== undefined && blockPids.has(Number(pid))) await jsm.streams.delete(stream.config.name);
  }
  await nc.close();
  rmSync(folder, { recursive: true, force: true });
});

it('the front page and the guides have TypeScript blocks, and tsc reports on no other file', async () => {
  expect(blocks.filter(({ page }) => page === 'README.md').length).toBeGreaterThan(0);
  expect(blocks.length).toBeGreaterThan(20);
  const all = await diagnostics();
  expect(all.filter((entry) => !pages.some((page) => diagnosticsOf(page, [entry]).length > 0))).toEqual([]);
});

for (const page of pages) {
  const own = blocks.filter((block) => block.page === page);
  if (own.length === 0) continue;

  // The pages run side by side, each block in a process of its own.
  describe.concurrent(page, () => {
    it(`its ${own.length} TypeScript blocks compile`, async () => {
      expect(diagnosticsOf(page, await diagnostics())).toEqual([]);
    });

    it.each(own.map(({ n, code, file }) => [n, code.split('\n')[0]!, file] as const))(
      'block %i (%s …) runs to its end against the fake CLI',
      async (_n, _first, file) => {
        const { command, env } = fakeEvoSci([
          { stderr: 'Loading agent…' },
          { transcript: join(root, 'examples/transcripts/demo-run.jsonl') },
          { resumeHint: '4e1f9a2b' },
        ]);
        const block = exec(process.execPath, [file.replace(/\.ts$/, '.mjs')], {
          cwd: root,
          env: { ...process.env, ...env, EVOSCI_BIN: command, NO_COLOR: '1' },
          timeout: 60_000,
        });
        if (block.child.pid !== undefined) blockPids.add(block.child.pid);
        const { stdout } = await block;
        // Each block prints what it shows.
        expect(stdout.trim(), basename(file)).not.toBe('');
      },
    );
  });
}
