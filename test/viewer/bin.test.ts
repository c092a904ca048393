import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fromJsonl } from '../../index.js';
import { fakeEvoSci } from '../../testing/index.js';
import { collect, fixtureBytes, fixturePath, fixtureTruth } from '../support/collect.js';
import { gone, readWhenWritten, scratch } from '../support/processes.js';

const bin = fileURLToPath(new URL('../../dist/bin/evosci-rx.js', import.meta.url));
const demo = 'examples/transcripts/demo-run.jsonl';
const run = promisify(execFile);

interface Truth {
  response: string;
  events: number;
  invocations: { name: string; status: string }[];
  delegations: unknown[];
  usage: { totalTokens: number };
  panelDispatches: { label: string }[];
}

/** The summary line the view must print for a run the generator modelled. */
function expectedSummary(truth: Truth): RegExp {
  const tools = truth.invocations.filter((i) => i.name !== 'task');
  const failed = tools.filter((i) => i.status === 'failed').length;
  const tokens = new Intl.NumberFormat('en-US').format(truth.usage.totalTokens);
  return new RegExp(
    `completed · ${tools.length} tool calls \\(${failed} failed\\) · ${truth.delegations.length} sub-agents · .*${tokens} main-agent tokens .* · ${truth.events} events`,
  );
}

describe.concurrent('the evosci-rx command', () => {
  const truth = fixtureTruth<Truth>(demo);

  it('view FILE prints each finished step, the final response and the counts when not on a TTY', async () => {
    const { stdout } = await run(process.execPath, [bin, 'view', fixturePath(demo)]);
    expect(stdout).toContain(`Response\n${truth.response}\n`);
    expect(stdout).toMatch(expectedSummary(truth));
    expect(stdout).toMatch(/^✗ execute Traceback/m);
    expect(stdout).toMatch(/^■ planner-agent /m);
    // A panel dispatch is named by its label, which only its start carried.
    for (const panel of truth.panelDispatches) expect(stdout).toContain(`panel ${panel.label} `);
    expect(stdout).not.toMatch(/\u001b\[/);
  });

  it('view - reads the stream from stdin', async () => {
    const child = spawn(process.execPath, [bin, 'view', '-'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdin.end(fixtureBytes(demo));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout).toMatch(expectedSummary(truth));
  });

  it('run -p starts EvoSci, shows it and records it with --record', async () => {
    const path = scratch();
    const { command, env } = fakeEvoSci([{ transcript: fixturePath(demo) }]);
    const { stdout } = await run(process.execPath, [bin, 'run', '-p', 'survey', '--record', path('run.jsonl')], {
      env: { ...process.env, ...env, EVOSCI_BIN: command },
    });
    expect(stdout).toMatch(expectedSummary(truth));
    expect(await collect(fromJsonl(readFileSync(path('run.jsonl'))))).toEqual(
      await collect(fromJsonl(fixtureBytes(demo))),
    );
  });

  it('stops the run on Ctrl-C, exits 130 and leaves no process behind', async () => {
    const path = scratch();
    const { command, env } = fakeEvoSci([
      { record: path('pid.json') },
      { lines: ['{"type": "text", "content": "hi"}'] },
      { hang: true },
    ]);
    const child = spawn(process.execPath, [bin, 'run', '-p', 'x'], {
      env: { ...process.env, ...env, EVOSCI_BIN: command },
    });
    const { pid } = JSON.parse(await readWhenWritten(path('pid.json'))) as { pid: number };
    child.kill('SIGINT');
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    expect(await gone(pid)).toBe(true);
  });

  it('explains its usage', async () => {
    const { stdout } = await run(process.execPath, [bin, '--help']);
    expect(stdout).toMatch(/evosci-rx view FILE\|-/);
    const failed = await run(process.execPath, [bin, 'view']).catch((err: { code: number; stderr: string }) => err);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringMatching(/^evosci-rx: view takes one FILE/) });
  });
});
