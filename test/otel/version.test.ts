// The instrumentation scope: `evosci-rx` at the package's version, from a constant the browser entry can hold.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromJsonl } from '../../index.js';
import { traceRun } from '../../otel/index.js';
import { VERSION } from '../../otel/version.js';
import { fixtureBytes } from '../support/collect.js';
import { memoryMetrics, memoryTracing, SpanTree } from './support.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { name: string; version: string };

describe('the instrumentation scope', () => {
  it("is the package's version: bump otel/version.ts with package.json", () => {
    expect(VERSION).toBe(pkg.version);
  });

  it('names the spans and the histograms: the package at its version', async () => {
    const { provider, spans } = memoryTracing();
    const { meterProvider, collect } = memoryMetrics();
    await lastValueFrom(
      fromJsonl(fixtureBytes('research-run.jsonl')).pipe(traceRun({ tracerProvider: provider, meterProvider })),
    );
    const scope = { name: pkg.name, version: pkg.version };
    expect(new SpanTree(spans()).roots()[0]!.instrumentationScope).toMatchObject(scope);
    expect((await collect()).scopes.map((s) => s.scope)).toEqual([expect.objectContaining(scope)]);
  });

  it('comes with an entry that bundles for the browser: no Node built-in, no process code', async () => {
    const result = await build({
      entryPoints: [`${root}otel/index.ts`],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => input.startsWith('node:') || /(^|\/)node_modules\/execa\//.test(input))).toEqual(
      [],
    );
    // What the entry takes of run(): the options it carries, and nothing that starts a process.
    expect(inputs.filter((input) => input.startsWith('src/process/'))).toEqual(['src/process/runOptionsOf.ts']);
  });
});
