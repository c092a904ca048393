// The packed tarball installed as a user installs it: it runs no script of its own at install, and each entry's
// declarations compile (`skipLibCheck: false`) and its code loads with only that entry's peers beside it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, buildProjects, exec, link, manifest, packTarball, unpack } from './packed.js';

const { dependencies, exports, peerDependencies, peerDependenciesMeta = {} } = manifest();
/** The peers every app installs; the optional ones only an entry that needs them adds. */
const required = Object.keys(peerDependencies).filter((name) => !peerDependenciesMeta[name]?.optional);

/**
 * What an app that uses these entries has installed, besides the package and its dependencies. A browser app
 * has no Node types: its entries' declarations must not need them. Entries with the same install share a project.
 */
const installs = [
  { name: 'browser', entries: ['./events', './flow', './operators'], peers: required, browser: true },
  { name: 'node', entries: ['.', './testing', './viewer', './runs'], peers: required, browser: false },
  { name: 'otel', entries: ['./otel'], peers: [...required, '@opentelemetry/api'], browser: true },
  {
    name: 'jetstream',
    entries: ['./jetstream'],
    peers: [...required, '@nats-io/jetstream', '@nats-io/transport-node'],
    browser: false,
  },
];

/** The scripts npm runs when it installs a package from a tarball, the build of a `prepare` among them. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

const specifier = (entry: string): string => `evosci-rx${entry.slice(1)}`;

/** An app that imports each of its entries, and prints how many names each one gave at run time. */
function app(entries: readonly string[]): string {
  const imports = entries.map((entry, i) => `import * as entry${i} from '${specifier(entry)}';`);
  const counts = entries.map((entry, i) => `${JSON.stringify(specifier(entry))}: Object.keys(entry${i}).length`);
  return `${imports.join('\n')}\nconsole.log(JSON.stringify({ ${counts.join(', ')} }));\n`;
}

/** One install's project: the unpacked tarball, the dependencies, that install's peers, and an app of its entries. */
async function writeProject(dir: string, tarball: string, install: (typeof installs)[number]): Promise<string> {
  const folder = join(dir, install.name);
  mkdirSync(folder);
  await unpack(tarball, folder);
  link(folder, [...Object.keys(dependencies), ...install.peers, ...(install.browser ? [] : ['@types/node'])]);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: install.name, type: 'module' }));
  writeFileSync(join(folder, 'app.ts'), app(install.entries));
  const target = { target: 'es2022', strict: true, skipLibCheck: false, outDir: 'out' };
  const compilerOptions = install.browser
    ? { ...target, module: 'esnext', moduleResolution: 'bundler', lib: ['es2023', 'dom', 'dom.iterable'], types: [] }
    : { ...target, module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2023'], types: ['node'] };
  writeFileSync(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['app.ts'] }));
  return folder;
}

describe('the packed package, installed with only the peers each entry needs', () => {
  let tarball = '';
  let dir = '';
  let built: Promise<Map<string, string>>;

  beforeAll(async () => {
    tarball = await packTarball();
    dir = mkdtempSync(join(tmpdir(), 'evosci-rx-peers-'));
    const folders = await Promise.all(installs.map((install) => writeProject(dir, tarball, install)));
    built = buildProjects(folders);
    // Each test awaits it; a failed build is reported by the tests, not here.
    built.catch(() => {});
  });

  afterAll(() => {
    for (const path of [dir, dirname(tarball)]) if (path) rmSync(path, { recursive: true, force: true });
  });

  it('runs no script of its own when installed', () => {
    const { scripts = {} } = manifest(join(dir, 'node', 'node_modules/evosci-rx'));
    expect(Object.keys(scripts).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([]);
  });

  it('names every entry in one install, and only peers it declares', () => {
    expect(installs.flatMap((install) => install.entries).sort()).toEqual(Object.keys(exports).sort());
    const declared = Object.keys(peerDependencies);
    expect(installs.flatMap((install) => install.peers).filter((name) => !declared.includes(name))).toEqual([]);
  });

  const named = installs.map((install) => ({
    ...install,
    imports: install.entries.map(specifier).join(', '),
    installed: install.peers.join(', '),
  }));

  it.concurrent.each(named)(
    '$imports: compile with skipLibCheck false and load, with only $installed',
    async ({ name, entries }) => {
      const folder = join(dir, name);
      expect((await built).get(folder)).toBe('');
      const { stdout } = await exec(process.execPath, [join(folder, 'out/app.js')], { cwd: folder });
      const counts = JSON.parse(stdout) as Record<string, number>;
      expect(Object.keys(counts)).toEqual(entries.map(specifier));
      for (const count of Object.values(counts)) expect(count).toBeGreaterThan(0);
    },
    BUILD_TIMEOUT_MS,
  );
});
