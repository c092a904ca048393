// What a broken or malicious producer, proxy or file can send, and the bounds the library keeps.
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import pc from 'picocolors';
import { from, lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  fromJsonl,
  run,
  summarize,
  pairToolCalls,
  sumUsage,
  groupSubagents,
  accumulateText,
  TimeoutError,
  type DecodeIssue,
  type EvoEvent,
  type RunOptions,
} from '../../index.js';
import { JsonlDecoder } from '../../src/events/decode/JsonlDecoder.js';
import { DecodedChunks } from '../support/collect.js';
import { runIn, systemEnvironment } from '../../src/process/run.js';
import { StderrLog } from '../../src/process/StderrLog.js';
import { fakeEvoSci, type FakeStep } from '../../testing/fakeEvoSci.js';
import { events as ev } from '../../testing/events.js';
import { viewActions } from '../../operators/index.js';
import { ViewModel } from '../../viewer/model.js';
import { describeAction, renderFrame } from '../../viewer/render.js';
import { ManualClock } from '../support/manualClock.js';
import { gone, isAlive, readWhenWritten, scratch } from '../support/processes.js';

const bin = fileURLToPath(new URL('../../dist/bin/evosci-rx.js', import.meta.url));
const exec = promisify(execFile);
const plain = pc.createColors(false);
/** Any control character a terminal could act on: everything in C0 and C1 but tab and newline, and DEL. */

const TERMINAL_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const line = (event: object) => JSON.stringify(event);

function fake(steps: FakeStep[], options: Partial<RunOptions> = {}): RunOptions {
  const { command, env } = fakeEvoSci(steps);
  return { prompt: 'test', command, ...options, env: { ...env, ...options.env } };
}

/** Every frame and plain line the viewer would draw for these events, colourless. */
async function drawn(events$: ReturnType<typeof fromJsonl>): Promise<string> {
  const actions = await lastValueFrom(events$.pipe(viewActions(), toArray()));
  const view = new ViewModel();
  const out: string[] = [];
  for (const action of actions) {
    out.push(renderFrame(view.apply(action), plain, '⠋', { columns: 100, rows: 40 }));
    out.push(describeAction(action, plain) ?? '');
  }
  return out.join('\n');
}

const OSC52 = '\u001b]52;c;ZXZpbA==\u0007';
const hostile = [
  ev.toolCall(`read${OSC52}`, { path: '\u001b[2J/etc', note: '\u001b[8mhidden' }, { id: 'c1' }),
  ev.toolResult('read', `\u001b[31mred\u009b1m${OSC52}`, { id: 'c1', success: false }),
  ev.subagentStart(`agent\u0007`, { instanceId: 'i1', description: '\u001b]0;title\u0007' }),
  ev.subagentToolCall('agent\u0007', 'x\u001bc', { q: '\u001b[?1049h' }, { id: 'call_0', instanceId: 'i1' }),
  ev.error(`boom ${OSC52}`),
  ev.askUser('q', [{ question: `Which?${OSC52}`, choices: [{ value: '\u001b[2Jall' }] }]),
  ev.text(`Hello \u001b[2J\u202eevil`),
  ev.done(`Hello \u001b[2J\u202eevil`),
];

describe('terminal escapes from the stream (1)', () => {
  it('reach neither the frame nor the plain lines of the viewer', async () => {
    const text = await drawn(fromJsonl(hostile.map(line).join('\n')));
    expect(text).not.toMatch(TERMINAL_CONTROL);
    expect(text).toContain('␛]52;c;ZXZpbA==␇');
  });

  it('reach nothing `evosci-rx view` prints, diagnostics of bad lines included', async () => {
    const path = scratch()('hostile.jsonl');
    writeFileSync(path, `${hostile.map(line).join('\n')}\nnot json ${OSC52}\n`);
    const { stdout, stderr } = await exec(process.execPath, [bin, 'view', path]).catch(
      (err: { stdout: string; stderr: string }) => err,
    );
    expect(stdout).toContain('Response');
    expect(stdout + stderr).not.toMatch(TERMINAL_CONTROL);
  });
});

describe('the stderr strip (2)', () => {
  it('cannot be undone by a sequence that removing another rebuilds', () => {
    const lines: string[] = [];
    const log = new StderrLog((l) => lines.push(l));
    log.write(new TextEncoder().encode('\u001b\u001b[0m]52;c;ZXZpbA==\u0007 and \u009b31m\u001b[1mbold\n'));
    log.end();
    expect(lines[0]).not.toMatch(TERMINAL_CONTROL);
    expect(log.tail).not.toMatch(TERMINAL_CONTROL);
    expect(lines[0]).toBe(']52;c;ZXZpbA== and bold');
  });

  it('applies to onStderr, stderrTail and the error message of a run', async () => {
    const seen: string[] = [];
    const error = await lastValueFrom(
      run(fake([{ stderr: '\u001b\u001b[0m]52;c;ZXZpbA==\u0007' }, { exit: 1 }], { onStderr: (l) => seen.push(l) })),
    ).then(
      () => ({ stderrTail: '', message: 'no error' }),
      (err: unknown) => err as Error & { stderrTail: string },
    );
    expect([...seen, error.stderrTail, error.message].join('\n')).not.toMatch(TERMINAL_CONTROL);
  });
});

describe('stderr floods (3, 8)', () => {
  it('megabytes of blank stderr lines keep the event loop free: a 1 s timeout fires in time', async () => {
    const started = Date.now();
    const error = await lastValueFrom(
      run(fake([{ stderrBytes: 8 << 20, blank: true }, { hang: true }], { timeoutMs: 1000, killGraceMs: 500 })),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TimeoutError);
    // Before the ring, 1 MB of blank lines held the loop for ~46 s; 8 MB would take many minutes. The
    // bound has margins of seconds for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('a tail without newlines stays within its bound', () => {
    const log = new StderrLog(undefined, 1000);
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    for (let i = 0; i < 512; i++) log.write(chunk);
    expect(log.tail.length).toBe(1000);
    expect(() => run({ prompt: 'x', stderrTailBytes: 0 })).toThrow(/stderrTailBytes/);
  });
});

describe('durations past what Node timers hold (4)', () => {
  it('a timeout of 2^31 ms or Infinity does not fire at once', async () => {
    for (const timeoutMs of [2 ** 31, 30 * 24 * 3600 * 1000, Infinity]) {
      const events = await lastValueFrom(
        run(fake([{ sleep: 200 }, { lines: [line(ev.done('ok'))] }], { timeoutMs })).pipe(toArray()),
      );
      expect(events.map((e) => e.type)).toEqual(['done']);
    }
  });

  it('an infinite kill grace never escalates past SIGINT', async () => {
    const record = scratch()('pid.json');
    const clock = new ManualClock();
    const subscription = runIn(
      { ...systemEnvironment, clock },
      fake([{ ignoreSigint: true }, { record }, { hang: true }], { killGraceMs: Infinity }),
    ).subscribe({ error: () => undefined });
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    subscription.unsubscribe();
    // SIGINT was sent, and no later signal is waiting on any clock.
    clock.advance(2 ** 53);
    expect(clock.waiting).toBe(0);
    expect(isAlive(pid)).toBe(true);
    process.kill(-pid, 'SIGKILL');
    expect(await gone(pid)).toBe(true);
  });
});

describe('deep JSON (5)', () => {
  const depth = 5000;
  const deep = `${'['.repeat(depth)}1${']'.repeat(depth)}`;

  it('a malformed deep line costs a diagnostic, not the stream', async () => {
    const issues: DecodeIssue[] = [];
    const text = `{"type": "tool_call", "name": "x", "id": "c", "args": ${deep}}\n${line(ev.text('after'))}\n`;
    const events = await lastValueFrom(fromJsonl(text, { onDiagnostic: (i) => issues.push(i) }).pipe(toArray()));
    expect(events).toEqual([ev.text('after')]);
    expect(issues.map((i) => i.line)).toEqual([1]);
  });

  it('a valid deep call sent twice goes through every operator and the viewer', async () => {
    const call = `{"type": "tool_call", "name": "x", "id": "c", "args": {"a": ${deep}}}`;
    const text = `${call}\n${call}\n${line(ev.toolResult('x', 'ok', { id: 'c' }))}\n${line(ev.done('d'))}\n`;
    const source = fromJsonl(text);
    expect((await lastValueFrom(source.pipe(pairToolCalls(), toArray()))).map((i) => i.status)).toEqual([
      'running',
      'succeeded',
    ]);
    expect((await lastValueFrom(source.pipe(summarize()))).invocations).toHaveLength(1);
    expect(await drawn(source)).toMatch(/✓ x/);
  });
});

describe('signal-exit beside the exit hook (6)', () => {
  it('SIGTERM still ends the app and its runs when signal-exit is loaded', async () => {
    const record = scratch()('pid.json');
    const { command, env } = fakeEvoSci([{ record }, { hang: true }]);
    const script = `
      import { onExit } from 'signal-exit';
      import { run } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};
      onExit(() => {});
      run({ prompt: 'x', command: ${JSON.stringify(command)}, env: ${JSON.stringify(env)} }).subscribe();
    `;
    const app = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const { pid } = JSON.parse(await readWhenWritten(record)) as { pid: number };
    app.kill('SIGTERM');
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      app.on('exit', (c, s) => resolve([c, s])),
    );
    expect([code, signal]).toEqual([null, 'SIGTERM']);
    expect(await gone(pid)).toBe(true);
  });
});

describe('the viewer at scale (7)', () => {
  it('draws 20,000 tool calls with work per event that does not grow with the run', async () => {
    const events: EvoEvent[] = [];
    for (let i = 0; i < 20_000; i++) {
      events.push(ev.toolCall('read_file', { path: `f${i}` }, { id: `c${i}` }));
      events.push(ev.toolResult('read_file', 'ok', { id: `c${i}` }));
    }
    const view = new ViewModel();
    let frames = 0;
    await new Promise<void>((resolve, reject) =>
      from(events)
        .pipe(viewActions())
        .subscribe({
          next: (action) => {
            view.apply(action);
            if (++frames % 500 === 0) renderFrame(view, plain, '⠋', { columns: 100, rows: 40 });
          },
          error: reject,
          complete: resolve,
        }),
    );
    expect(view.tools.size).toBe(20_000);
    expect(renderFrame(view, plain, '⠋', { columns: 100, rows: 40 })).toMatch(/… \d+ earlier/);
  });
});

describe('memory of a line sent a byte at a time (9)', () => {
  it('is bounded by the line, not by the number of chunks', () => {
    const size = 2 << 20;
    const decoder = new DecodedChunks(new JsonlDecoder({ maxLineBytes: 4 << 20 }));
    const head = new TextEncoder().encode('{"type": "text", "content": "');
    for (const byte of head) decoder.write(new Uint8Array([byte]));
    const before = process.memoryUsage();
    const x = new Uint8Array([0x78]);
    for (let i = 0; i < size; i++) decoder.write(x);
    const after = process.memoryUsage();
    const grown = after.heapUsed + after.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    // One object per chunk cost ~240× the payload; the held line now costs at most twice its size.
    expect(grown).toBeLessThan(32 << 20);
    const [event] = decoder.write(new TextEncoder().encode('"}\n'));
    expect((event as { content: string }).content).toHaveLength(size);
  });
});

describe('keys that cannot collide (11)', () => {
  it('keeps apart an id "#1" and an id-less call, and a main-agent "sub:x" and sub-agent sub’s "x"', async () => {
    const events: EvoEvent[] = [
      ev.toolCall('a', { n: 1 }, { id: '#1' }),
      ev.toolCall('a', { n: 2 }, { id: '' }),
      ev.toolCall('b', { n: 3 }, { id: 'sub:x' }),
      ev.subagentToolCall('sub', 'b', { n: 4 }, { id: 'x' }),
      ev.toolResult('b', 'main', { id: 'sub:x' }),
      ev.subagentToolResult('sub', 'b', 'sub', { id: 'x' }),
    ];
    const summary = await lastValueFrom(from(events).pipe(summarize()));
    expect(summary.invocations.map((i) => [i.args['n'], i.status])).toEqual([
      [1, 'unfinished'],
      [2, 'unfinished'],
      [3, 'succeeded'],
      [4, 'succeeded'],
    ]);
  });
});

describe('smaller bounds (12)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('skips whitespace-only lines without asking JSON.parse', async () => {
    const parse = vi.spyOn(JSON, 'parse');
    const events = await lastValueFrom(
      // A line off the text-delta path: the one line that JSON.parse reads.
      fromJsonl(`${' \t '.repeat(3)}\n`.repeat(10_000) + line(ev.thinking('a\nb'))).pipe(toArray()),
    );
    expect(events).toEqual([ev.thinking('a\nb')]);
    expect(parse).toHaveBeenCalledTimes(1);
  });

  it('makes a negative or non-finite token count a diagnostic, not a total', async () => {
    const issues: DecodeIssue[] = [];
    const text = [
      '{"type": "usage_stats", "input_tokens": -5, "output_tokens": 1}',
      '{"type": "usage_stats", "input_tokens": 1e400, "output_tokens": 1}',
      '{"type": "usage_stats", "input_tokens": 10, "output_tokens": 2}',
    ].join('\n');
    const totals = await lastValueFrom(fromJsonl(text, { onDiagnostic: (i) => issues.push(i) }).pipe(sumUsage()));
    expect(totals).toEqual({ inputTokens: 10, outputTokens: 2, totalTokens: 12 });
    expect(issues.map((i) => i.line)).toEqual([1, 2]);
  });

  it('lets more than 10 runs share one AbortSignal without a warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const controller = new AbortController();
    const runs = Array.from({ length: 12 }, () =>
      lastValueFrom(run(fake([{ hang: true }], { signal: controller.signal })).pipe(toArray())).catch(
        (err: unknown) => err,
      ),
    );
    controller.abort();
    const errors = await Promise.all(runs);
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    expect(errors.every((e) => (e as Error).name === 'CancelledError')).toBe(true);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('keeps the arguments of a call whose result arrived first', async () => {
    const events: EvoEvent[] = [
      ev.toolResult('ls', 'a b', { id: 'c1' }),
      ev.toolCall('ls', { path: '/' }, { id: 'c1' }),
    ];
    const summary = await lastValueFrom(from(events).pipe(summarize()));
    expect(summary.invocations).toEqual([expect.objectContaining({ args: { path: '/' }, status: 'succeeded' })]);
  });
});

describe('fuzz: arbitrary bytes, depths and chunkings (all of the above at once)', () => {
  const fragment = fc.oneof(
    fc.constantFrom(...hostile.map(line)),
    fc.string({ unit: 'binary' }),
    fc
      .nat(3000)
      .map((d) => `{"type": "tool_call", "name": "x", "id": "c", "args": {"a": ${'['.repeat(d)}${']'.repeat(d)}}}`),
    fc.constantFrom('{"type": "usage_stats", "input_tokens": 1e400, "output_tokens": -1}', '\u001b]52;c;x\u0007', ''),
  );

  it('no throw escapes, no control character reaches the rendered output, memory stays bounded', async () => {
    const before = process.memoryUsage().rss;
    await fc.assert(
      fc.asyncProperty(fc.array(fragment, { maxLength: 30 }), fc.integer({ min: 1, max: 97 }), async (parts, size) => {
        const bytes = new TextEncoder().encode(parts.join('\n'));
        const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
          bytes.subarray(i * size, (i + 1) * size),
        );
        const source = fromJsonl(chunks, { maxLineBytes: 1 << 20 });
        for (const op of [pairToolCalls(), groupSubagents(), accumulateText(), sumUsage(), summarize()]) {
          await lastValueFrom(source.pipe(op as never, toArray()));
        }
        expect(await drawn(source)).not.toMatch(TERMINAL_CONTROL);
      }),
      { numRuns: 150 },
    );
    expect(process.memoryUsage().rss - before).toBeLessThan(512 << 20);
  });
});
