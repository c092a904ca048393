import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ExitError, run, TruncatedStreamError, type DecodeIssue, type EvoEvent, type RunOptions } from '../../index.js';
import { fakeEvoSci, type FakeStep } from '../../testing/index.js';
import { gone, readWhenWritten, scratch } from '../support/processes.js';

const text = (content: string) => JSON.stringify({ type: 'text', content });
const done = JSON.stringify({ type: 'done', content: 'ok', response: 'ok' });

async function outcome(steps: FakeStep[], options: Partial<RunOptions> = {}) {
  const { command, env } = fakeEvoSci(steps);
  const events: EvoEvent[] = [];
  const issues: DecodeIssue[] = [];
  const error = await run({ prompt: 'x', command, env, onDiagnostic: (i) => issues.push(i), ...options })
    .forEach((e) => events.push(e))
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  return { events, issues, error };
}

describe('fault injection against the fake CLI', () => {
  it('stdout closed early while the process keeps running: waits for the exit, then TruncatedStreamError', async () => {
    const path = scratch();
    const { events, error } = await outcome([
      { lines: [text('a'), text('b')] },
      { closeStdout: true },
      { record: path('pid.json') },
      { sleep: 300 },
    ]);
    expect(events.map((e) => (e as { content: string }).content)).toEqual(['a', 'b']);
    expect(error).toBeInstanceOf(TruncatedStreamError);
    expect(await gone((JSON.parse(readFileSync(path('pid.json'), 'utf8')) as { pid: number }).pid)).toBe(true);
  });

  it('invalid UTF-8 bytes: replaced inside a string, reported outside one, nothing else lost', async () => {
    const enc = (s: string) => [...new TextEncoder().encode(s)];
    const { events, issues, error } = await outcome([
      { stdoutBytes: [...enc('{"type": "text", "content": "a'), 0xc3, 0x28, ...enc('"}\n')] },
      { stdoutBytes: [0xff, 0xfe, ...enc('{"type": "text"}\n')] },
      { lines: [text('b'), done] },
    ]);
    expect(error).toBeUndefined();
    expect(events).toEqual([{ type: 'text', content: 'a\ufffd(' }, { type: 'text', content: 'b' }, JSON.parse(done)]);
    expect(issues.map((i) => i.line)).toEqual([2]);
  });

  it('a 100 MB line over maxLineBytes is reported and dropped, and the run goes on', async () => {
    const { events, issues, error } = await outcome([
      { lines: [text('before')] },
      { bigLine: 100 * 1024 * 1024 },
      { lines: [text('after'), done] },
    ]);
    expect(error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['text', 'text', 'done']);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      line: 2,
      message: expect.stringMatching(/longer than maxLineBytes \(67108864\)/),
    });
    expect(issues[0]!.raw.length).toBeLessThan(400);
  });

  it('SIGTERM ignored and SIGKILL from outside: every whole event first, then ExitError', async () => {
    const path = scratch();
    const { command, env } = fakeEvoSci([
      { ignoreSigterm: true },
      { lines: [text('a'), text('b')] },
      { record: path('pid.json') },
      { hang: true },
    ]);
    const events: EvoEvent[] = [];
    const result = run({ prompt: 'x', command, env })
      .forEach((e) => events.push(e))
      .catch((err: unknown) => err);
    const { pid } = JSON.parse(await readWhenWritten(path('pid.json'))) as { pid: number };
    // Whichever the kernel delivers first, the ignored SIGTERM changes nothing.
    process.kill(pid, 'SIGTERM');
    process.kill(pid, 'SIGKILL');
    const error = await result;
    expect(events).toHaveLength(2);
    expect(error).toBeInstanceOf(ExitError);
    expect(error).toMatchObject({ signal: 'SIGKILL' });
  });
});
