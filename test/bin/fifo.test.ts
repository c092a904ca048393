// The command with FIFOs (mkfifo): `run --record FIFO` waits for its reader
// without blocking, `view FIFO` waits for its writer, and a signal ends
// either, whatever it is waiting for. Each step waits for a sign the command
// gives (a line on stderr or stdout, the FIFO among its open files).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { constants, openSync, readdirSync, readlinkSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fromJsonl } from '../../src/index.js';
import { fakeEvoSci, type FakeStep } from '../../testing/fakeEvoSci.js';
import { events as ev } from '../../testing/events.js';
import { collect } from '../support/collect.js';
import { eventually, scratch } from '../support/processes.js';

const bin = fileURLToPath(new URL('../../dist/bin/evosci-rx.js', import.meta.url));
const line = (e: object) => JSON.stringify(e);

interface Started {
  child: ChildProcess;
  /** Resolves once `pattern` has appeared on that output. */
  sign(on: 'stdout' | 'stderr', pattern: RegExp): Promise<void>;
  /** The exit status (128+n for a signal the command handled), once it has exited. */
  status: Promise<number | null>;
  output: { stdout: string; stderr: string };
}

function start(args: string[], steps: FakeStep[] = [{ hang: true }]): Started {
  const fake = fakeEvoSci(steps);
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, NO_COLOR: '1', ...fake.env, EVOSCI_BIN: fake.command },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const waiting: { on: 'stdout' | 'stderr'; pattern: RegExp; resolve: () => void }[] = [];
  const check = () => {
    for (const w of waiting.splice(0)) {
      if (w.pattern.test(output[w.on])) w.resolve();
      else waiting.push(w);
    }
  };
  for (const on of ['stdout', 'stderr'] as const)
    child[on].on('data', (chunk: Buffer) => {
      output[on] += chunk.toString();
      check();
    });
  const status = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const sign = (on: 'stdout' | 'stderr', pattern: RegExp) =>
    new Promise<void>((resolve) => {
      waiting.push({ on, pattern, resolve });
      check();
    });
  return { child, sign, status, output };
}

function fifo(): string {
  const path = scratch()('fifo');
  execFileSync('mkfifo', [path]);
  return path;
}

/** Whether `pid` has `path` open: the sign that `view` has opened its FIFO. */
function hasOpen(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/** Reads a FIFO to its end through the event loop, opening it without blocking. */
function readAll(path: string): Promise<Buffer> {
  const reader = new Socket({ fd: openSync(path, constants.O_RDONLY | constants.O_NONBLOCK), writable: false });
  const chunks: Buffer[] = [];
  reader.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    reader.on('end', () => resolve(Buffer.concat(chunks)));
    reader.on('error', reject);
  });
}

const WAITING = /waiting for a reader of .*fifo \(--record\)/;

describe.skipIf(process.platform !== 'linux').concurrent('evosci-rx with FIFOs', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'run --record FIFO with no reader says it waits, and %s ends it before EvoSci starts',
    async (signal, code) => {
      const path = fifo();
      const cliStarted = scratch()('cli.json');
      const command = start(['run', '-p', 'x', '--plain', '--record', path], [{ record: cliStarted }, { hang: true }]);
      await command.sign('stderr', WAITING);
      command.child.kill(signal);
      expect(await command.status).toBe(code);
      expect(command.output.stderr.match(new RegExp(WAITING, 'g'))).toHaveLength(1);
      // EvoSci was never started.
      expect(() => execFileSync('test', ['-e', cliStarted])).toThrow();
    },
    30_000,
  );

  it('run --record FIFO records the run once a reader comes', async () => {
    const path = fifo();
    const lines = [line(ev.text('hello')), line(ev.done('hello'))];
    const command = start(['run', '-p', 'x', '--plain', '--record', path], [{ lines }]);
    await command.sign('stderr', WAITING);
    const recorded = await readAll(path);
    expect(await command.status).toBe(0);
    expect(await collect(fromJsonl(recorded))).toEqual(await collect(fromJsonl(lines.join('\n'))));
  }, 30_000);

  it('run --record FIFO whose reader stops reading still ends on Ctrl-C', async () => {
    const path = fifo();
    // The reader opens and never reads: the pipe fills (64 KiB), and the rest waits in the command.
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const big = Array.from({ length: 8 }, (_, i) => [
      line(ev.toolCall('ls', {}, { id: `c${i}` })),
      line(ev.toolResult('ls', 'x'.repeat(32 * 1024), { id: `c${i}` })),
    ]).flat();
    // Shown once every line before it has been written to the recording.
    const last = [
      line(ev.toolCall('final_step', {}, { id: 'z' })),
      line(ev.toolResult('final_step', 'ok', { id: 'z' })),
    ];
    const transcript = scratch()('run.jsonl');
    writeFileSync(transcript, [...big, ...last].join('\n') + '\n');
    const command = start(['run', '-p', 'x', '--plain', '--record', path], [{ transcript }, { hang: true }]);
    try {
      await command.sign('stdout', /final_step/);
      command.child.kill('SIGINT');
      expect(await command.status).toBe(130);
    } finally {
      closeSync(reader);
    }
  }, 30_000);

  it('view FIFO with no writer ends on Ctrl-C', async () => {
    const path = fifo();
    const command = start(['view', '--plain', path]);
    expect(await eventually(() => hasOpen(command.child.pid!, path))).toBe(true);
    command.child.kill('SIGINT');
    expect(await command.status).toBe(130);
  }, 30_000);

  it('view FIFO shows what its writer wrote, and ends on Ctrl-C while the writer holds it open', async () => {
    const path = fifo();
    const command = start(['view', '--plain', path]);
    expect(await eventually(() => hasOpen(command.child.pid!, path))).toBe(true);
    const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    try {
      writeSync(
        writer,
        `${line(ev.toolCall('ls', { path: '.' }, { id: 'c1' }))}\n${line(ev.toolResult('ls', 'a b', { id: 'c1' }))}\n`,
      );
      await command.sign('stdout', /ls/);
      command.child.kill('SIGINT');
      expect(await command.status).toBe(130);
      expect(command.output.stdout).toMatch(/1 tool call/);
    } finally {
      closeSync(writer);
    }
  }, 30_000);
});
