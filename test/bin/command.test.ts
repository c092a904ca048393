// The evosci-rx command as a person meets it: a real process, its stdout, stderr and exit status.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeEvoSci, type FakeStep } from '../../testing/fakeEvoSci.js';
import { events as ev } from '../../testing/events.js';
import { fixturePath } from '../support/collect.js';
import { gone, readWhenWritten, scratch } from '../support/processes.js';

const bin = fileURLToPath(new URL('../../dist/bin/evosci-rx.js', import.meta.url));
const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function command(args: string[], steps?: FakeStep[], input?: string): Promise<Ran> {
  const fake = steps && fakeEvoSci(steps);
  const env = { ...process.env, NO_COLOR: '1', ...(fake ? { ...fake.env, EVOSCI_BIN: fake.command } : {}) };
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { env }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

const line = (e: object) => JSON.stringify(e);
const STACK = /\n\s+at /;

describe('evosci-rx usage', () => {
  it('--help and --version print to stdout and exit 0', async () => {
    const help = await command(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/Exit status: 0 completed, 1 failed or incomplete, 2 usage error, 3 needs input/);
    expect(await command(['--version'])).toEqual({ code: 0, stdout: `evosci-rx ${version}\n`, stderr: '' });
  });

  it.concurrent.each([
    [['run', '-p'], /: --prompt takes a value$/],
    [['run', '--workdir'], /: --workdir takes a value$/],
    [['run', '-p', 'x', '--bogus'], /unknown option --bogus/],
    [['view', '--foo', 'rec.jsonl'], /unknown option --foo/],
    [['run', '-p', '-x'], /--prompt takes a value; one that starts with "-" is written --prompt=-VALUE/],
    [
      ['run', '-p', 'x', '--timeout', '-5'],
      /: --timeout takes a duration such as 90s, 30m or 2h \(0: none\), not "-5"$/,
    ],
    [['run', '--replay', 'f', '--speed', '-2'], /: --speed takes a number above 0, such as 2 or 0.5, not "-2"$/],
    // A missing value before another option is said to be missing, not taken for that option.
    [['run', '-p', 'x', '--timeout', '--json'], /: --timeout takes a value$/],
    [['run', '--timeout', '-p', 'task'], /: --timeout takes a value$/],
    [['run', '--replay', 'f', '--speed', '--plain'], /: --speed takes a value$/],
    [['run', '-p', 'x', '--timeout', '-', '--timeout', '-1s'], /: --timeout takes a duration .*, not "-1s"$/],
    [['run', '-p', 'x', '--timeout', '5m', '--timeout', '-5'], /: --timeout takes a duration .*, not "-5"$/],
    [['run', '-p', 'x', '--timeout', 'abc', '--timeout', '-5'], /: --timeout takes a duration .*, not "-5"$/],
    [['run', '--replay', 'f', '--speed', '2', '--speed', '-2'], /: --speed takes a number above 0, .*, not "-2"$/],
    // Whether the option applies is said first, whatever its value.
    [['view', '--timeout', '-5', 'f'], /: --timeout is an option of run/],
    [['run', '--replay', 'f', '--timeout', '-5'], /: --replay plays a recording: --timeout does not apply/],
    [['run', '-p', 'x', '--speed', '-2'], /: --speed is an option of --replay/],
    [
      ['run', '-p', '--timeout', '-5'],
      /: --prompt takes a value; one that starts with "-" is written --prompt=-VALUE$/,
    ],
    [['run', '-p', 'x', '--timeout=-5'], /--timeout takes a duration such as 90s, 30m or 2h \(0: none\), not "-5"/],
    [['run', '--replay', 'r.jsonl', '-p', 'x'], /--replay plays a recording: --prompt does not apply/],
    [['run', '--replay', 'r.jsonl', '--speed', '0'], /--speed takes a number above 0/],
    [['run', '-p', 'x', '--speed', '2'], /--speed is an option of --replay/],
    [['view', '--replay', 'r.jsonl', 'a'], /--replay is an option of run/],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['view'], /view takes one FILE/],
    [['view', 'a', 'b'], /view takes one FILE/],
    [['view', '--record', 'r', 'a'], /--record is an option of run/],
    [['run', '-p', 'x', '--timeout', 'soon'], /--timeout takes a duration/],
    [[], /no command/],
  ])('%j is a usage error: one line and the usage on stderr, exit 2', async (args, message) => {
    const { code, stdout, stderr } = await command(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    const [first, blank, usage] = stderr.split('\n');
    expect(first).toMatch(/^evosci-rx: /);
    expect(first).toMatch(message);
    expect([blank, usage]).toEqual(['', 'Usage:']);
    expect(stderr).not.toMatch(STACK);
  });
});

describe.concurrent('evosci-rx runtime errors', () => {
  it('go to stderr with a prefix, for a missing file, a directory and a missing EvoSci', async () => {
    expect(await command(['view', 'missing.jsonl'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'evosci-rx: cannot read missing.jsonl: no such file\n',
    });
    expect((await command(['view', '/tmp'])).stderr).toBe('evosci-rx: cannot read /tmp: it is a directory\n');
    const missing = await new Promise<Ran>((resolve) =>
      execFile(
        process.execPath,
        [bin, 'run', '-p', 'x'],
        { env: { ...process.env, EVOSCI_BIN: '/nonexistent/EvoSci' } },
        (err, stdout, stderr) => resolve({ code: (err as { code?: number } | null)?.code ?? 0, stdout, stderr }),
      ),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /evosci-rx: could not start "\/nonexistent\/EvoSci": .*ENOENT: install EvoScientist 0.2.1 or later, or set EVOSCI_BIN to its path\n$/,
    );
    // A run that never started has no summary to show: the one line is all.
    expect(missing.stdout).toBe('');
    // The command's own terms: no option of run() a command-line user cannot set.
    expect(missing.stderr).not.toMatch(/command option|run\(\)/);
  });

  it('say how many lines were not events when a program prints text and exits 0', async () => {
    const { code, stderr } = await command(['run', '-p', 'x'], [{ lines: ['Hello, I am not EvoSci', 'Goodbye'] }]);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /exited 0 without a done event; 2 lines were not events, the first \(line 1\): "Hello, I am not EvoSci"/,
    );
  });

  it('end a run cleanly when --record cannot be written (a missing directory, a full disk)', async () => {
    const steps: FakeStep[] = [{ lines: [line(ev.text('a')), line(ev.done('a'))] }];
    const missing = await command(['run', '-p', 'x', '--record', '/nonexistent/dir/run.jsonl'], steps);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^evosci-rx: cannot record to \/nonexistent\/dir\/run.jsonl/);
    const full = await command(['run', '-p', 'x', '--record', '/dev/full'], steps);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/evosci-rx: stopped: recording to \/dev\/full: ENOSPC/);
    expect(full.stderr).not.toMatch(STACK);
  });

  it('stop the run when its output is piped into head', async () => {
    const path = scratch();
    const record = path('pid.json');
    const transcript = path('long.jsonl');
    writeFileSync(transcript, Array.from({ length: 5000 }, (_, i) => `${line(ev.text(`line ${i}`))}\n`).join(''));
    const fake = fakeEvoSci([{ record }, { transcript, delayMs: 1 }, { hang: true }]);
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${bin}" run -p x --json | head -n 3 >/dev/null`], {
      env: { ...process.env, ...fake.env, EVOSCI_BIN: fake.command },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Listened for at once: the whole pipeline can be over before the pid file is read.
    const closed = new Promise((resolve) => shell.on('close', resolve));
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    await closed;
    expect(stderr).not.toMatch(STACK);
    expect(stderr).toMatch(/evosci-rx: stopped: standard output was closed/);
    expect(await gone(pid)).toBe(true);
  }, 60_000);
});

describe.concurrent('evosci-rx endings', () => {
  it('view exits 1 for a transcript that ends in an error, or stops without done, and says so', async () => {
    const failed = await command(['view', fixturePath('error-run.jsonl')]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^failed · .* · 1 error · /m);
    const cut = await command(['view', '-'], undefined, `${line(ev.text('half'))}\n`);
    expect(cut.code).toBe(1);
    expect(cut.stdout).toMatch(/^incomplete · 0 tool calls · 0 sub-agents · .* · 1 event$/m);
  });

  it('shows each question with its choices and the command that answers, and exits 3', async () => {
    const { code, stdout } = await command(['view', fixturePath('needs-input-ask.jsonl')]);
    expect(code).toBe(3);
    expect(stdout).toMatch(/Needs input\n\? Which languages should the survey cover\?\n {4}· English only\n/);
    expect(stdout).toMatch(
      /evosci-rx run --resume <thread id from EvoSci’s resume hint> --no-auto-mode -p "<your reply>"/,
    );
  });

  it('shows the approval asked for: the tool and its arguments', async () => {
    const { code, stdout } = await command(['view', fixturePath('needs-input-approval.jsonl')]);
    expect(code).toBe(3);
    expect(stdout).toMatch(/! approve execute \{.*"command":/);
    expect(stdout).toMatch(/approve \/ edit \/ reject/);
  });

  it('run waits for the thread id of a run that stopped to ask and prints the exact command', async () => {
    const question = ev.askUser('q1', [{ question: 'Which year?', type: 'text' }], { toolCallId: 'c1' });
    const { code, stdout } = await command(
      ['run', '-p', 'survey', '--no-auto-mode', '--plain'],
      [
        { lines: [line(ev.toolCall('ask_user', {}, { id: 'c1' })), line(question), line(ev.done(''))] },
        { sleep: 200 },
        { resumeHint: '9b2e4f10' },
      ],
    );
    expect(code).toBe(3);
    expect(stdout).toMatch(/\? Which year\?/);
    expect(stdout).toContain('evosci-rx run --resume 9b2e4f10 --no-auto-mode -p "<your reply>"');
  });

  it('--json writes the events as JSONL for piping', async () => {
    const events = [ev.text('a'), ev.usage(3, 4), ev.done('a')];
    const { code, stdout } = await command(['run', '-p', 'x', '--json'], [{ lines: events.map(line) }]);
    expect(code).toBe(0);
    expect(
      stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual(events);
  });

  it('counts in the singular and the plural', async () => {
    const one = [ev.toolCall('ls', {}, { id: 'c1' }), ev.toolResult('ls', 'a', { id: 'c1' }), ev.done('ok')];
    const { stdout } = await command(['view', '-'], undefined, one.map(line).join('\n'));
    expect(stdout).toMatch(/completed · 1 tool call · 0 sub-agents · 0 main-agent tokens \(0 in · 0 out\) · 3 events/);
  });

  it('SIGTERM stops the run and its EvoSci, and exits 143', async () => {
    const record = scratch()('pid.json');
    const fake = fakeEvoSci([{ record }, { lines: [line(ev.text('hi'))] }, { hang: true }]);
    const child = spawn(process.execPath, [bin, 'run', '-p', 'x'], {
      env: { ...process.env, ...fake.env, EVOSCI_BIN: fake.command },
    });
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(143);
    expect(await gone(pid)).toBe(true);
  });
});

describe.concurrent('evosci-rx run, as a person stops it or replays it', () => {
  it('Ctrl-C prints the command that goes on with the thread EvoSci named while stopping', async () => {
    const record = scratch()('pid.json');
    const fake = fakeEvoSci([
      { handleSigint: { resumeHint: 'ab12cd34' } },
      { record },
      { lines: [line(ev.text('hi'))] },
      { hang: true },
    ]);
    const child = spawn(process.execPath, [bin, 'run', '-p', 'x', '--plain'], {
      env: { ...process.env, ...fake.env, EVOSCI_BIN: fake.command, NO_COLOR: '1' },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // The CLI has set its SIGINT handler once it writes its record; the command had set its own before starting it.
    await readWhenWritten(record);
    child.kill('SIGINT');
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    expect(stderr).toContain('evosci-rx: to go on in this thread: evosci-rx run --resume ab12cd34 -p "…"');
  });

  it('a crash prints the summary of what came, then the error, and exits 1', async () => {
    const { code, stdout, stderr } = await command(
      ['run', '-p', 'x', '--plain'],
      [
        { lines: [line(ev.toolCall('ls', {}, { id: 'c1' })), line(ev.toolResult('ls', 'a', { id: 'c1' }))] },
        { stderr: 'Traceback: boom' },
        { exit: 1 },
      ],
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/incomplete · 1 tool call · 0 sub-agents/);
    expect(stderr).toMatch(/^evosci-rx: .* exited with code 1\n--- last stderr lines ---\nTraceback: boom/m);
  });

  it('--timeout 0 sets no limit', async () => {
    const { code } = await command(
      ['run', '-p', 'x', '--timeout', '0'],
      [{ sleep: 300 }, { lines: [line(ev.done('ok'))] }],
    );
    expect(code).toBe(0);
  });

  it('view shows no durations: a recording carries no times', async () => {
    const { code, stdout } = await command(['view', '--plain', fixturePath('research-run.jsonl')]);
    expect(code).toBe(0);
    const tools = stdout.split('\n').filter((l) => /^\s*[✓✗] /.test(l) && !/ panel /.test(l));
    expect(tools.length).toBeGreaterThan(5);
    // Panel dispatches keep theirs: the stream carries their duration_ms.
    expect(tools.filter((l) => /\d\.\ds$/.test(l))).toEqual([]);
  });

  it('--replay plays a recording as a live run, with the summary view gives', async () => {
    const lines = readFileSync(fixturePath('research-run.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const recording = scratch()('timed.jsonl');
    writeFileSync(
      recording,
      lines.map((l, i) => `${JSON.stringify({ ...(JSON.parse(l) as object), elapsed_ms: i * 50 })}\n`).join(''),
    );
    const replayed = await command(['run', '--replay', recording, '--speed', '50', '--plain']);
    const viewed = await command(['view', '--plain', fixturePath('research-run.jsonl')]);
    expect(replayed.code).toBe(viewed.code);
    const summaryLine = (out: string) => out.trimEnd().split('\n').at(-1);
    expect(summaryLine(replayed.stdout)).toBe(summaryLine(viewed.stdout));
    expect((await command(['--help'])).stdout).toMatch(/--replay FILE/);
  });
});

describe.concurrent('evosci-rx fake, as an app is pointed at the fake CLI', () => {
  /** A POSIX shell that evals what `fake` printed, then runs `then` in that environment. */
  function inShell(fakeArgs: string, then: string): Promise<Ran> {
    const script = `eval "$("${process.execPath}" "${bin}" fake ${fakeArgs})" && ${then}`;
    return new Promise((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
      for (const name of ['EVOSCI_BIN', 'EVOSCI_FAKE']) delete env[name];
      execFile('/bin/sh', ['-c', script], { env }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
  }

  it('prints EVOSCI_BIN and EVOSCI_FAKE, and a run started in that environment replays the recording', async () => {
    const ran = await inShell('research --delay 1', `"${process.execPath}" "${bin}" run -p anything --json`);
    expect(ran).toMatchObject({ code: 0, stderr: '' });
    const types = ran.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toHaveLength(203);
    expect(types.at(-1)).toBe('done');
  });

  it("takes a transcript of the app's own, and the run ends as the transcript does", async () => {
    const file = scratch()('fake.jsonl');
    writeFileSync(file, `${line(ev.text('hi'))}\n${line(ev.error('boom'))}\n`);
    const ran = await inShell(`"${file}"`, `"${process.execPath}" "${bin}" run -p x --json`);
    expect(ran.code).toBe(1);
    expect(
      ran.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { type: string }).type),
    ).toEqual(['text', 'error']);
  });

  it.each([
    [['fake'], /fake takes one recorded run or FILE/],
    [['fake', 'research', '--delay', 'soon'], /--delay takes a whole number of milliseconds/],
    [['fake', 'research', '--json'], /--json is not an option of fake/],
    [['run', '-p', 'x', '--delay', '5'], /--delay is an option of fake/],
  ])('refuses %j with a usage error', async (args, message) => {
    const ran = await command(args);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(message);
  });

  it('names a transcript it cannot read', async () => {
    const ran = await command(['fake', '/nonexistent/run.jsonl']);
    expect(ran).toMatchObject({ code: 1, stdout: '' });
    expect(ran.stderr).toMatch(/cannot read \/nonexistent\/run.jsonl: no such file/);
  });
});
