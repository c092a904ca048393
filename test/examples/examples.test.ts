// Runs each example as a user would, as a child process with the fake CLI
// (EVOSCI_RX_FAKE=1) and stdout on a pipe, and checks what it prints.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify, stripVTControlCharacters } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeEvoSci } from '../../testing/index.js';
import { fixtureTruth } from '../support/collect.js';
import { isAlive, PATIENCE_MS, scratch } from '../support/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Truth {
  events: number;
  response: string;
  invocations: { name: string }[];
  usage: { totalTokens: number };
}
const truth = (name: string): Truth => fixtureTruth<Truth>(`examples/transcripts/${name}.jsonl`);
const transcriptEvents = (name: string): Record<string, unknown>[] =>
  readFileSync(join(root, 'examples/transcripts', `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface Example {
  child: ChildProcess;
  /** Everything written to stdout so far, colours stripped. */
  stdout(): string;
  exited: Promise<Outcome>;
}

function start(file: string, args: string[] = []): Example {
  const env: NodeJS.ProcessEnv = { ...process.env, EVOSCI_RX_FAKE: '1', NO_COLOR: '1' };
  delete env['FORCE_COLOR'];
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${file}`, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Outcome>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({ code, signal, stdout: stripVTControlCharacters(stdout), stderr: stripVTControlCharacters(stderr) }),
    );
  });
  return { child, stdout: () => stripVTControlCharacters(stdout), exited };
}

async function runExample(file: string, args: string[] = []): Promise<Outcome> {
  const outcome = await start(file, args).exited;
  if (outcome.code !== 0)
    throw new Error(`${file} exited ${outcome.code ?? outcome.signal}\n${outcome.stdout}\n${outcome.stderr}`);
  return outcome;
}

async function until(condition: () => boolean, what: string, withinMs = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Live (non-zombie) fake CLI processes whose command line carries `tag`. */
function fakeProcesses(tag: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    if (cmdline.includes('fake-evosci.mjs') && cmdline.includes(tag) && isAlive(Number(entry)))
      pids.push(Number(entry));
  }
  return pids;
}

interface TableRow {
  id: number;
  state: string;
  tools: number;
  tokens: number;
}

/** The rows of the last status table fleet printed. */
function finalTable(stdout: string): TableRow[] {
  const lines = stdout.split('\n');
  const header = lines.findLastIndex((line) => /^\s*#\s+task\s+state\s+tools\s+tokens/.test(line));
  expect(header, 'a status table').toBeGreaterThanOrEqual(0);
  const rows: TableRow[] = [];
  for (const line of lines.slice(header + 1)) {
    const m = /^\s*(\d+)\s.*\s(queued|running|done|failed|cancelled)\s+(\d+)\s+([\d,]+)\s*$/.exec(line);
    if (!m) break;
    rows.push({ id: Number(m[1]), state: m[2]!, tools: Number(m[3]), tokens: Number(m[4]!.replaceAll(',', '')) });
  }
  return rows;
}

beforeAll(() => {
  // The examples import the package by name, which resolves to dist/.
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
});

// Each example is a process of its own: they run side by side.
describe.concurrent('the examples', () => {
  describe('examples/fleet.ts', () => {
    it('runs every task to done, at most --concurrency at a time', async () => {
      const demo = truth('demo-run');
      const { stdout } = await runExample('fleet.ts', ['--tasks', '4', '--concurrency', '2', '--speed', '25']);

      const rows = finalTable(stdout);
      expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 4]);
      for (const row of rows) {
        expect(row).toEqual({
          id: row.id,
          state: 'done',
          // The viewer's count: every invocation but the `task` calls that start sub-agents.
          tools: demo.invocations.filter((i) => i.name !== 'task').length,
          tokens: demo.usage.totalTokens,
        });
      }

      // Plain lines on a pipe: one per state change, never more than 2 running.
      const transitions = [...stdout.matchAll(/^task (\d+) (running|done|failed|cancelled)\b/gm)].map((m) => m[2]);
      expect(transitions.filter((s) => s === 'running')).toHaveLength(4);
      expect(transitions.filter((s) => s === 'done')).toHaveLength(4);
      let running = 0;
      let most = 0;
      for (const state of transitions) {
        running += state === 'running' ? 1 : -1;
        most = Math.max(most, running);
      }
      expect(most).toBe(2);
    });

    it.skipIf(process.platform !== 'linux')(
      'on SIGINT cancels every task, leaves no CLI process behind and exits 130',
      async () => {
        const tag = `fleet-${randomUUID()}`;
        const fleet = start('fleet.ts', ['--tasks', '6', '--concurrency', '3', '--speed', '1', '--tag', tag]);
        await until(() => /^task \d+ running/m.test(fleet.stdout()), 'the first status line');
        // The processes are really there before the interrupt.
        await until(() => fakeProcesses(tag).length === 3, 'three fake CLI processes');

        fleet.child.kill('SIGINT');
        const { code, signal, stdout } = await fleet.exited;

        expect({ code, signal }).toEqual({ code: 130, signal: null });
        expect(finalTable(stdout).map((r) => r.state)).toEqual(Array(6).fill('cancelled'));
        expect(fakeProcesses(tag)).toEqual([]);
      },
    );
  });

  describe('examples/record-replay.ts', () => {
    const path = scratch();

    it('records every event with elapsed_ms and replays the same events', async () => {
      const demo = truth('demo-run');
      const file = path('run.jsonl');
      await runExample('record-replay.ts', ['record', file, '--speed', '50']);

      const recorded = readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(recorded).toHaveLength(demo.events);
      for (const event of recorded) expect(event['elapsed_ms']).toEqual(expect.any(Number));
      expect(recorded.map(({ elapsed_ms: _elapsed, ...event }) => event)).toEqual(transcriptEvents('demo-run'));

      const { stdout } = await runExample('record-replay.ts', ['replay', file, '--speed', '20']);
      const replayedTypes = [...stdout.matchAll(/^\s*\d+\.\d{3}s {2}(\S+)/gm)].map((m) => m[1]);
      expect(replayedTypes).toEqual(recorded.map((e) => e['type']));
      expect(stdout).toContain(`replayed ${demo.events} events`);
      expect(stdout.split('response:\n')[1]?.trimEnd()).toBe(demo.response);
    });

    it('with no arguments records the demo run to a temporary file and replays it', async () => {
      const demo = truth('demo-run');
      const { stdout } = await runExample('record-replay.ts');
      expect(stdout).toContain(`recorded ${demo.events} events`);
      expect(stdout).toMatch(/replaying \S+run\.jsonl at 10x/);
      expect(stdout).toContain(`replayed ${demo.events} events`);
      expect(stdout.split('response:\n')[1]?.trimEnd()).toBe(demo.response);
    });
  });

  describe('examples/interrupt-resume.ts', () => {
    it('shows the question, replies in a resumed run and prints that run’s response', async () => {
      const { stdout } = await runExample('interrupt-resume.ts', ['--speed', '50', '--answer', 'ImageNet-1k']);

      expect(stdout).toContain(`Agent: ${truth('interrupt-run').response}`);
      expect(stdout).toContain('? Quel jeu de données dois-je utiliser ?');
      expect(stdout).toMatch(/1\. CIFAR-10\n\s+2\. ImageNet-1k\n\s+3\. Jeu personnalisé\n\s+→ ImageNet-1k\n/);
      // The optional question without an --answer gets a default.
      expect(stdout).toMatch(/Budget GPU maximal \(heures\) \? \(optional\)\n\s+→ No preference\./);
      expect(stdout).toMatch(/Resuming thread \S+/);
      expect(stdout.split('Final response:\n')[1]?.trimEnd()).toBe(truth('resumed-run').response);
    });
  });

  describe('examples/live-progress.ts', () => {
    it('--demo replays the bundled run through the fake CLI and ends with its response and counts', async () => {
      const demo = truth('demo-run');
      const { code, stdout } = await start('live-progress.ts', ['--demo', '--speed', '20']).exited;
      expect(code).toBe(0);
      expect(stdout).toContain(`Response\n${demo.response}\n`);
      expect(stdout).toMatch(new RegExp(`· ${demo.events} events\\n?$`));
      expect(stdout).toMatch(/^■ research-agent /m);
    });
  });

  describe('examples/quick-start.ts', () => {
    it('is the README quick start, word for word', () => {
      const readme = readFileSync(join(root, 'README.md'), 'utf8');
      const file = readFileSync(join(root, 'examples/quick-start.ts'), 'utf8');
      // After its comment and the fallback import that only the example has.
      const code = file.replace(/^(\/\/.*\n)+import '\.\/fakeWhenMissing\.js';\n/, '');
      expect(code).not.toBe(file);
      expect(readme).toContain('```ts\n' + code + '```');
    });

    it('without EvoSci, says so in one line and runs the fake CLI', async () => {
      const demo = truth('demo-run');
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: dirname(process.execPath) };
      for (const name of ['EVOSCI_BIN', 'EVOSCI_RX_FAKE', 'EVOSCI_FAKE']) delete env[name];
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'examples/quick-start.ts'],
        { cwd: root, env },
      );
      expect(stderr).toBe(
        'EvoSci is not installed: replaying a recorded run through the fake CLI (set EVOSCI_BIN to use yours).\n',
      );
      expect(stdout.trimEnd().split('\n').at(-1)).toBe(`completed: ${demo.usage.totalTokens} main-agent tokens`);
    });

    it('runs against the fake CLI and prints the text, the tools and the token total', async () => {
      const demo = truth('demo-run');
      const { command, env } = fakeEvoSci([{ transcript: join(root, 'examples/transcripts/demo-run.jsonl') }]);
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/quick-start.ts'], {
        cwd: root,
        env: { ...process.env, ...env, EVOSCI_BIN: command },
      });
      expect(stdout).toContain(demo.response.slice(0, 40));
      expect(stdout).toMatch(/^succeeded tavily_search$/m);
      expect(stdout).toMatch(/^failed execute$/m);
      // Each finished call on a line of its own, never run on from the streamed text.
      expect(stdout).not.toMatch(/.(succeeded|failed) [\w-]+$/m);
      expect(stdout).not.toMatch(/running/);
      // The streamed text ends before the total starts: on a line of its own.
      expect(stdout.trimEnd().split('\n').at(-1)).toBe(`completed: ${demo.usage.totalTokens} main-agent tokens`);
    });
    it('keeps a tool line off the text when a delta is empty', async () => {
      const lines = [
        { type: 'text', content: 'Intro.\n' },
        { type: 'text', content: '' },
        { type: 'tool_call', id: 'c1', name: 'ls', args: {} },
        { type: 'tool_result', id: 'c1', name: 'ls', content: 'a', success: true },
        { type: 'text', content: '' },
        { type: 'done', content: 'Intro.\n', response: 'Intro.\n' },
      ].map((event) => JSON.stringify(event));
      const { command, env } = fakeEvoSci([{ lines }]);
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/quick-start.ts'], {
        cwd: root,
        env: { ...process.env, ...env, EVOSCI_BIN: command },
      });
      expect(stdout).toBe('Intro.\nsucceeded ls\ncompleted: 0 main-agent tokens\n');
    });
  });

  describe('examples/fleet-jetstream.ts', () => {
    it('runs a submitter, two workers and a viewer as processes, and the viewer sees every run complete', async () => {
      const demo = truth('demo-run');
      const { stdout } = await runExample('fleet-jetstream.ts', ['--tasks', '4', '--speed', '25']);

      const submitted = [...stdout.matchAll(/^\[submitter\] submitted (\S+) /gm)].map((m) => m[1]);
      expect(submitted).toHaveLength(4);
      const viewed = [...stdout.matchAll(/^\[viewer\] (\S+) (.*)$/gm)];
      expect(viewed.map((m) => m[1]).sort()).toEqual([...submitted].sort());
      for (const m of viewed)
        expect(m[2]).toBe(
          `completed: ${demo.invocations.filter((i) => i.name !== 'task').length} tool calls, ${demo.usage.totalTokens} main-agent tokens`,
        );
      // Both workers took work.
      for (const worker of ['worker 1', 'worker 2'])
        expect(stdout).toMatch(new RegExp(`^\\[${worker}\\] started \\S+ attempt 1$`, 'm'));
      expect(stdout.match(/^\[worker \d\] finished \S+ attempt 1 completed$/gm)).toHaveLength(4);
    }, 60_000);
  });
});
