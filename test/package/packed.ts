// The package as a user installs it, for the packed-package tests: the tarball `npm pack` makes, unpacked into a
// project's node_modules beside the packages it needs, each linked from this checkout's node_modules (no network),
// and TypeScript projects that consume it, built together.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const exec = promisify(execFile);
export const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(root, 'node_modules/.bin/tsc');

/** This checkout's package.json: what a user's npm reads of it. */
export interface Manifest {
  readonly exports: Record<string, unknown>;
  readonly dependencies: Record<string, string>;
  readonly peerDependencies: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>;
  readonly scripts?: Record<string, string>;
}

export const manifest = (dir = root): Manifest =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** The tarball of this checkout, as `npm pack` makes it (its own scripts skipped: the tests build first). */
export async function packTarball(): Promise<string> {
  const packs = mkdtempSync(join(tmpdir(), 'evosci-rx-pack-'));
  const { stdout } = await exec('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packs], {
    cwd: root,
  });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  return join(packs, packed!.filename);
}

/**
 * The tarball unpacked as `node_modules/evosci-rx` of `project`, a real folder of its own: resolution from the
 * package's files then finds only what `project` holds, not this checkout's node_modules.
 */
export async function unpack(tarball: string, project: string): Promise<void> {
  const folder = join(project, 'node_modules/evosci-rx');
  mkdirSync(folder, { recursive: true });
  await exec('tar', ['-xzf', tarball, '-C', folder, '--strip-components=1']);
}

/** Links each package of this checkout's node_modules into `project`'s, where npm would have installed it. */
export function link(project: string, names: readonly string[]): void {
  for (const name of names) {
    mkdirSync(join(project, 'node_modules', name, '..'), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), join(project, 'node_modules', name));
  }
}

/**
 * How long a test may wait for `buildProjects`: one tsc checking several projects with their libraries, beside the
 * other packed-package test's build, on a machine busy with the rest of the suite. Only a hang should reach it.
 */
export const BUILD_TIMEOUT_MS = 180_000;

/** Builds every project in one tsc process, and returns each one's diagnostics (`--verbose` heads each project's). */
export async function buildProjects(folders: readonly string[]): Promise<Map<string, string>> {
  const { stdout } = await exec(tsc, ['-b', '--verbose', ...folders], { cwd: root }).catch(
    (error: { stdout: string }) => error,
  );
  const diagnostics = new Map<string, string>();
  for (const section of stdout.split("Building project '").slice(1)) {
    const folder = folders.find((f) => section.startsWith(join(f, 'tsconfig.json')))!;
    diagnostics.set(
      folder,
      section
        .split('\n')
        .filter((line) => /error TS\d+/.test(line))
        .join('\n'),
    );
  }
  return diagnostics;
}
