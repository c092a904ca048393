// The packed tarball as CommonJS projects use it: require() in plain Node, and
// TypeScript apps compiled as CommonJS (NestJS's default settings, and nodenext).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(root, 'node_modules/.bin/tsc');
const transcript = JSON.stringify(join(root, 'test/fixtures/research-run.jsonl'));

/** What every consumer prints: a summary of the fixture, read through the package's entries. */
const expected = (): string => {
  const truth = JSON.parse(readFileSync(join(root, 'test/fixtures/research-run.truth.json'), 'utf8')) as {
    events: number;
  };
  return `events ${truth.events} guard true brand true`;
};

const consumerJs = `
const { readFileSync } = require('node:fs');
const { lastValueFrom } = require('rxjs');
const { fromJsonl, isKnownEvent, EvoSciError, TimeoutError } = require('evosci-rx');
const { summarize } = require('evosci-rx/operators');
const events = require('evosci-rx/events');
lastValueFrom(fromJsonl(readFileSync(${transcript}, 'utf8')).pipe(summarize())).then((summary) => {
  const brand = new TimeoutError('t') instanceof EvoSciError && events.EvoSciError === EvoSciError;
  console.log('events', summary.events, 'guard', isKnownEvent({ type: 'text', content: 'x' }), 'brand', brand);
});
`;

const consumerTs = `
import { readFileSync } from 'node:fs';
import { lastValueFrom } from 'rxjs';
import { fromJsonl, isKnownEvent, EvoSciError, TimeoutError, type EvoEvent } from 'evosci-rx';
import { summarize, type RunSummary } from 'evosci-rx/operators';
import * as events from 'evosci-rx/events';
const first: EvoEvent = { type: 'text', content: 'x' };
void lastValueFrom(fromJsonl(readFileSync(${transcript}, 'utf8')).pipe(summarize())).then((summary: RunSummary) => {
  const brand = new TimeoutError('t') instanceof EvoSciError && events.EvoSciError === EvoSciError;
  console.log('events', summary.events, 'guard', isKnownEvent(first), 'brand', brand);
});
`;

/** A project folder with the tarball unpacked as its `evosci-rx`, and the package's dependencies beside it. */
async function consumerProject(tarball: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-cjs-'));
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'evosci-rx'), { recursive: true });
  await exec('tar', ['-xzf', tarball, '-C', join(modules, 'evosci-rx'), '--strip-components=1']);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, object>;
  const needed = [...Object.keys(manifest['dependencies']!), ...Object.keys(manifest['peerDependencies']!)];
  for (const name of [...needed, '@types/node']) {
    mkdirSync(join(modules, name, '..'), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(modules, name));
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'commonjs' }));
  return dir;
}

describe('CommonJS consumers of the packed package', () => {
  let project = '';

  beforeAll(async () => {
    const packs = mkdtempSync(join(tmpdir(), 'evosci-rx-pack-'));
    const { stdout } = await exec('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packs], {
      cwd: root,
    });
    const [packed] = JSON.parse(stdout) as { filename: string }[];
    project = await consumerProject(join(packs, packed!.filename));
  });

  it('require() loads every entry, and one error family is shared by all of them', async () => {
    writeFileSync(join(project, 'consumer.js'), consumerJs);
    const { stdout } = await exec(process.execPath, ['consumer.js'], { cwd: project });
    expect(stdout.trim()).toBe(expected());
  });

  it.concurrent.each([
    ['commonjs', 'node10'],
    ['nodenext', 'nodenext'],
  ])('a TypeScript app with module %s and moduleResolution %s compiles and runs', async (module, resolution) => {
    const out = join(project, `out-${module}`);
    writeFileSync(join(project, `app-${module}.ts`), consumerTs);
    await exec(
      tsc,
      [
        ...['--module', module, '--moduleResolution', resolution, '--target', 'es2022', '--strict', '--skipLibCheck'],
        ...['--types', 'node', '--outDir', out, `app-${module}.ts`],
      ],
      { cwd: project },
    );
    const { stdout } = await exec(process.execPath, [join(out, `app-${module}.js`)], { cwd: project });
    expect(stdout.trim()).toBe(expected());
  });
});
