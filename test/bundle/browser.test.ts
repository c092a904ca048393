import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  exports: Record<string, { default: string }>;
};

/** The browser-safe entries of the package, as its `exports` map names them. */
const browserEntries = ['./events', './operators'].filter((entry) => entry in pkg.exports);

describe('browser bundles', () => {
  it('include the events and operators entries', () => {
    expect(browserEntries).toEqual(['./events', './operators']);
  });

  it.each(browserEntries)('%s bundles for the browser with no Node built-in and no execa', async (entry) => {
    const result = await build({
      entryPoints: [`${root}${pkg.exports[entry]!.default}`],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => /(^|\/)node_modules\/(execa|cross-spawn)\//.test(input))).toEqual([]);
    expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    // The bundle really holds the library: rxjs is pulled in by both entries.
    expect(inputs.some((input) => input.includes('node_modules/rxjs/'))).toBe(true);
    expect(result.outputFiles[0]!.text).not.toMatch(/from\s*["'](node:|fs|child_process|stream)["']/);
  });
});

describe('the web dashboard page', () => {
  it('bundles for the browser from the package entries, with no Node built-in', async () => {
    const { bundleForBrowser } = await import('../../examples/web/bundle.js');
    const script = await bundleForBrowser(`${root}examples/web/page/main.ts`);
    // The library itself is in it: the run follower, the event decoder it uses, an operator and the run model under it.
    expect(script).toMatch(/function followRun/);
    expect(script).toMatch(/function decodeLine/);
    expect(script).toMatch(/function viewActions/);
    expect(script).toMatch(/RunModel = class|class RunModel/);
  });
});
