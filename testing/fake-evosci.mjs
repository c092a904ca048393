#!/usr/bin/env node
// A stand-in for the EvoSci CLI that replays a script: transcript lines on
// stdout, stderr output, pauses, crashes, signals. Its script is the JSON in
// the EVOSCI_FAKE environment variable; `fakeEvoSci()` writes it.
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const script = JSON.parse(process.env.EVOSCI_FAKE ?? '{"steps": []}');

/** The type of the last transcript line written: EvoSci exits 0 after a `done`, 1 after an exception (no `done`). */
let lastType;

function write(stream, data) {
  if (stream.write(data)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onError = (err) => {
      stream.off('drain', onDrain);
      reject(err);
    };
    const onDrain = () => {
      stream.off('error', onError);
      resolve();
    };
    stream.once('drain', onDrain);
    stream.once('error', onError);
  });
}

function transcriptLines(step) {
  if (step.lines) return step.lines.map((line) => (line.endsWith('\n') ? line : `${line}\n`));
  const text = readFileSync(step.transcript, 'utf8');
  return text.split(/(?<=\n)/).filter((line) => line.trim() !== '');
}

function stdinState() {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('open'), 2000);
    process.stdin.on('error', () => {
      clearTimeout(timer);
      resolve('error');
    });
    process.stdin.on('end', () => {
      clearTimeout(timer);
      resolve('eof');
    });
    process.stdin.resume();
  });
}

const steps = {
  async record({ record, append }) {
    const stdin = await stdinState();
    const seen = JSON.stringify({
      pid: process.pid,
      argv: process.argv.slice(2),
      cwd: process.cwd(),
      stdin,
      env: process.env,
    });
    if (append) appendFileSync(record, `${seen}\n`);
    else writeFileSync(record, seen);
  },
  async transcript(step) {
    const lines = transcriptLines(step);
    const from = step.from ?? 0;
    const limit = from + (step.count ?? lines.length);
    for (let i = from; i < limit && i < lines.length; i++) {
      // The type read off the text: a line of Python's JSON (a bare NaN) is no JSON.parse input.
      const delay = step.delayByType?.[/^\{"type": ?"([^"]*)"/.exec(lines[i])?.[1] ?? ''] ?? step.delayMs;
      if (delay) await sleep(delay);
      // Timestamped events let a reader measure write-to-read latency.
      const line = step.stamp
        ? lines[i].replace(/}\s*$/, `, "written_at": ${performance.timeOrigin + performance.now()}}\n`)
        : lines[i];
      await write(process.stdout, line);
    }
    const last = Math.min(limit, lines.length) - 1;
    if (last >= from) lastType = /^\{"type": ?"([^"]*)"/.exec(lines[last])?.[1];
  },
  async lines(step) {
    await steps.transcript(step);
  },
  async stdout({ stdout }) {
    await write(process.stdout, stdout);
  },
  async stdoutBytes({ stdoutBytes }) {
    await write(process.stdout, Buffer.from(stdoutBytes));
  },
  async bigLine({ bigLine, count = 1 }) {
    const chunk = 'x'.repeat(1 << 20);
    for (let i = 0; i < count; i++) {
      await write(process.stdout, '{"type": "tool_result", "name": "read_file", "success": true, "content": "');
      for (let left = bigLine; left > 0; left -= chunk.length)
        await write(process.stdout, left >= chunk.length ? chunk : chunk.slice(0, left));
      await write(process.stdout, '"}\n');
    }
  },
  async stderr({ stderr }) {
    await write(process.stderr, stderr.endsWith('\n') ? stderr : `${stderr}\n`);
  },
  async stderrBytes({ stderrBytes, blank }) {
    const line = blank ? '\n'.repeat(100_000) : `${'E'.repeat(99)}\n`.repeat(1000);
    for (let left = stderrBytes; left > 0; left -= line.length)
      await write(process.stderr, line.slice(0, Math.min(left, line.length)));
  },
  async resumeHint({ resumeHint }) {
    await write(
      process.stderr,
      `\u001b[2mResume this session with:\u001b[0m\n\u001b[1;36mEvoSci --resume ${resumeHint}\u001b[0m\n`,
    );
  },
  async sleep({ sleep: ms }) {
    await sleep(ms);
  },
  // A test's sign to go on, instead of a guess at how long it needs.
  async waitForFile({ waitForFile }) {
    while (!existsSync(waitForFile)) await sleep(20);
  },
  async ignoreSigterm() {
    process.on('SIGTERM', () => {});
  },
  async ignoreSigint() {
    process.on('SIGINT', () => {});
  },
  // As EvoSci does: on Ctrl-C it cleans up, prints its resume hint and exits 130.
  async handleSigint({ handleSigint: { resumeHint, delayMs = 0 } }) {
    process.on('SIGINT', async () => {
      if (delayMs) await sleep(delayMs);
      if (resumeHint) await steps.resumeHint({ resumeHint });
      process.exit(130);
    });
  },
  async grandchild({ grandchild, ignoreSigterm, inheritOutput, ownSession }) {
    const code = `${ignoreSigterm ? "process.on('SIGTERM', () => {});" : ''} setInterval(() => {}, 1000);`;
    // Unref'd, as a tool started in the background: the CLI may exit before it.
    const child = spawn(process.execPath, ['-e', code], {
      stdio: inheritOutput ? ['ignore', 'inherit', 'inherit'] : 'ignore',
      detached: Boolean(ownSession),
    });
    child.unref();
    writeFileSync(grandchild, String(child.pid));
  },
  async closeStdout() {
    closeSync(1);
  },
  async kill({ kill }) {
    process.kill(process.pid, kill);
    await sleep(10_000);
  },
  async hang() {
    await new Promise(() => setInterval(() => {}, 1000));
  },
};

/** A run with `--resume` plays the steps of the first `onResume` step instead of the rest of the script. */
const resumed = process.argv.some((arg) => arg === '--resume' || arg.startsWith('--resume='));
let plan = script.steps ?? [];
for (let i = 0; i < plan.length; i++) {
  const step = plan[i];
  if ('onResume' in step) {
    if (resumed) {
      plan = step.onResume;
      i = -1;
    }
    continue;
  }
  if ('exit' in step) {
    process.exitCode = step.exit;
    break;
  }
  if ('exitAsEvoSci' in step) {
    process.exitCode = lastType === 'done' ? 0 : 1;
    break;
  }
  const name = Object.keys(step).find((key) => key in steps);
  if (!name) throw new Error(`fake-evosci: unknown step ${JSON.stringify(step)}`);
  await steps[name](step);
}
