#!/usr/bin/env node
// `npm test`: the build, then the static checks (types of the page, lint,
// format) beside the test files. On two cores the checks fill the time the
// test files spend waiting on their child processes; their output is printed
// once they are done, and the first failure of either fails the whole.
import { spawn } from 'node:child_process';

function step(command, args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    if (capture) for (const stream of [child.stdout, child.stderr]) stream.on('data', (d) => (output += d));
    child.on('close', (code, signal) => resolve({ ok: code === 0, output, child, code: code ?? 128, signal }));
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const built = await step(npm, ['run', '--silent', 'build']);
if (!built.ok) process.exit(built.code);

const checks = step(npm, ['run', '--silent', 'check'], { capture: true });
const tests = step('node_modules/.bin/vitest', ['run', ...process.argv.slice(2)]);
const [checked, tested] = await Promise.all([checks, tests]);
process.stdout.write(`\n── static checks (tsc of the page, eslint, prettier) ──\n${checked.output}`);
process.stdout.write(checked.ok ? 'static checks passed\n' : 'static checks FAILED\n');
process.exit(checked.ok && tested.ok ? 0 : 1);
