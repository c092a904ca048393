// The packed tarball as CommonJS projects use it: require() in plain Node, and TypeScript apps compiled as CommonJS
// (NestJS's default settings, node16 and nodenext), beside an ES-module app that must keep working.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LTS_NODE_VERSION, ltsNode, noLtsNode } from '../support/ltsNode.js';
import { BUILD_TIMEOUT_MS, buildProjects, exec, link, manifest, packTarball, root, unpack } from './packed.js';

const transcript = JSON.stringify(join(root, 'test/fixtures/research-run.jsonl'));

/** What every consumer prints: a summary of the fixture, read through the package's entries. */
const expected = (): string => {
  const truth = JSON.parse(readFileSync(join(root, 'test/fixtures/research-run.truth.json'), 'utf8')) as {
    events: number;
  };
  return `events ${truth.events} guard true brand true entries 7`;
};

const consumerJs = `
const { readFileSync } = require('node:fs');
const { lastValueFrom } = require('rxjs');
const { fromJsonl, isKnownEvent, run, EvoSciError, TimeoutError } = require('evosci-rx');
const { summarize } = require('evosci-rx/operators');
const events = require('evosci-rx/events');
const { fakeEvoSci } = require('evosci-rx/testing');
const { liveView } = require('evosci-rx/viewer');
const { serveRuns } = require('evosci-rx/jetstream');
const { traceRun } = require('evosci-rx/otel');
lastValueFrom(fromJsonl(readFileSync(${transcript}, 'utf8')).pipe(summarize())).then((summary) => {
  const error = new TimeoutError('t');
  const brand = error instanceof EvoSciError && events.EvoSciError === EvoSciError && EvoSciError.is(error);
  const entries = [run, summarize, events.decodeLine, fakeEvoSci, liveView, serveRuns, traceRun];
  const loaded = entries.filter((f) => typeof f === 'function').length;
  console.log('events', summary.events, 'guard', isKnownEvent({ type: 'text', content: 'x' }), 'brand', brand, 'entries', loaded);
});
`;

// The \`@ts-expect-error\` fails the build if the package's types were lost (\`any\` accepts anything).
const consumerTs = `
import { readFileSync } from 'node:fs';
import { lastValueFrom } from 'rxjs';
import { fromJsonl, isKnownEvent, run, EvoSciError, TimeoutError, type EvoEvent } from 'evosci-rx';
import { summarize, type RunSummary } from 'evosci-rx/operators';
import * as events from 'evosci-rx/events';
import { fakeEvoSci } from 'evosci-rx/testing';
import { liveView } from 'evosci-rx/viewer';
import { serveRuns } from 'evosci-rx/jetstream';
import { traceRun } from 'evosci-rx/otel';
const first: EvoEvent = { type: 'text', content: 'x' };
// @ts-expect-error: not an event type
const wrong: EvoEvent = { type: 'no-such-event' };
void wrong;
void lastValueFrom(fromJsonl(readFileSync(${transcript}, 'utf8')).pipe(summarize())).then((summary: RunSummary) => {
  const error: EvoSciError = new TimeoutError('t');
  const brand = error instanceof EvoSciError && events.EvoSciError === EvoSciError && EvoSciError.is(error);
  const entries: unknown[] = [run, summarize, events.decodeLine, fakeEvoSci, liveView, serveRuns, traceRun];
  const loaded = entries.filter((f) => typeof f === 'function').length;
  console.log('events', summary.events, 'guard', isKnownEvent(first), 'brand', brand, 'entries', loaded);
});
`;

/**
 * The TypeScript consumers, one small project each: NestJS's default settings (\`commonjs\`, which resolves as
 * \`node10\`), \`node16\` and \`nodenext\` as CommonJS, and an ES-module app of a bundler. \`skipLibCheck: false\` also
 * checks the package's declarations, in the mode that reads its \`.d.cts\` files as a CommonJS app would.
 */
const consumers = [
  { name: 'commonjs', module: 'commonjs', moduleResolution: 'node10', skipLibCheck: true },
  { name: 'node16', module: 'node16', moduleResolution: 'node16', skipLibCheck: true },
  { name: 'node16-libcheck', module: 'node16', moduleResolution: 'node16', skipLibCheck: false },
  { name: 'nodenext', module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true },
  { name: 'bundler-esm', module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true },
];

/** Writes each consumer's project; the ES-module one's output folder says \`"type": "module"\` for Node. */
function writeConsumers(project: string): string[] {
  return consumers.map(({ name, ...options }) => {
    const folder = join(project, `ts-${name}`);
    mkdirSync(join(folder, 'out'), { recursive: true });
    writeFileSync(join(folder, 'app.ts'), consumerTs);
    const compilerOptions = {
      ...options,
      target: 'es2022',
      lib: ['es2023'],
      strict: true,
      types: ['node'],
      outDir: 'out',
    };
    writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['app.ts'] }));
    if (options.module === 'esnext') writeFileSync(join(folder, 'out/package.json'), '{ "type": "module" }');
    return folder;
  });
}

/** A project folder with the tarball unpacked as its `evosci-rx`, and the package's dependencies beside it. */
async function consumerProject(tarball: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'evosci-rx-cjs-'));
  await unpack(tarball, dir);
  const { dependencies, peerDependencies } = manifest();
  link(dir, [...Object.keys(dependencies), ...Object.keys(peerDependencies), '@types/node']);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'commonjs' }));
  return dir;
}

describe('CommonJS consumers of the packed package', () => {
  let tarball = '';
  let project = '';
  let built: Promise<Map<string, string>>;

  beforeAll(async () => {
    tarball = await packTarball();
    project = await consumerProject(tarball);
    built = buildProjects(writeConsumers(project));
    // Each test awaits it; a failed build is reported by the tests, not here.
    built.catch(() => {});
  });

  afterAll(() => {
    for (const dir of [project, dirname(tarball)]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('require() loads every entry, and one error family is shared by all of them', async () => {
    writeFileSync(join(project, 'consumer.js'), consumerJs);
    const { stdout } = await exec(process.execPath, ['consumer.js'], { cwd: project });
    expect(stdout.trim()).toBe(expected());
  });

  it.concurrent.each(consumers)(
    'a TypeScript app with module $module, moduleResolution $moduleResolution, skipLibCheck $skipLibCheck compiles and runs',
    async ({ name }) => {
      const folder = join(project, `ts-${name}`);
      expect((await built).get(folder)).toBe('');
      const { stdout } = await exec(process.execPath, [join(folder, 'out/app.js')], { cwd: project });
      expect(stdout.trim()).toBe(expected());
    },
    BUILD_TIMEOUT_MS,
  );

  // Node 20 is the floor, past its end of life; the package must work as well on the line users move to.
  it.skipIf(noLtsNode !== undefined)(
    `require() and an ES-module app run as well on Node ${LTS_NODE_VERSION}, the current LTS`,
    async () => {
      const node = await ltsNode();
      expect((await exec(node, ['--version'])).stdout.trim()).toBe(`v${LTS_NODE_VERSION}`);
      writeFileSync(join(project, 'consumer.js'), consumerJs);
      const required = await exec(node, ['consumer.js'], { cwd: project });
      expect(required.stdout.trim()).toBe(expected());
      const esm = join(project, 'ts-bundler-esm');
      expect((await built).get(esm)).toBe('');
      const imported = await exec(node, [join(esm, 'out/app.js')], { cwd: project });
      expect(imported.stdout.trim()).toBe(expected());
    },
    BUILD_TIMEOUT_MS,
  );
});
