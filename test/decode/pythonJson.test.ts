import { describe, expect, it } from 'vitest';
import { fromJsonl, toJsonl, type DecodeIssue, type ToolCallEvent } from '../../index.js';
import { collect, diagnostics, fixtureBytes } from '../support/collect.js';

const sweep = 'subagent-approval.jsonl';

describe("Python's JSON", () => {
  it('keeps a tool call whose args hold NaN, Infinity and -Infinity, with no diagnostic of a dropped line', async () => {
    const { issues, onDiagnostic } = diagnostics();
    const events = await collect(fromJsonl(fixtureBytes(sweep), { onDiagnostic }));
    const call = events.find((e): e is ToolCallEvent => e.type === 'tool_call' && e.name === 'configure_sweep');
    expect(call?.args).toEqual({
      lr: NaN,
      clip: Infinity,
      floor: -Infinity,
      seed: 12345678901234567000,
      note: 'NaN, Infinity and -Infinity stay text in a string',
      grid: [0.1, NaN, [Infinity, { min: -Infinity }]],
    });
    expect(issues.filter((i) => !i.kept)).toEqual([]);
    // Its result pairs with it instead of arriving as an orphan.
    expect(events.filter((e) => e.type === 'tool_result')).toHaveLength(1);
  });

  it('keeps the sub-agent call and the approval request whose args hold NaN and Infinity', async () => {
    const events = await collect(fromJsonl(fixtureBytes(sweep), { strict: true }));
    const call = events.find((e) => e.type === 'subagent_tool_call');
    const interrupt = events.find((e) => e.type === 'interrupt');
    expect(call?.type === 'subagent_tool_call' && call.args).toEqual({
      command: 'python sweep.py',
      lr: NaN,
      budget: Infinity,
    });
    expect(interrupt?.type === 'interrupt' && interrupt.action_requests[0]?.args).toEqual(
      call?.type === 'subagent_tool_call' && call.args,
    );
    expect(events.at(-1)?.type).toBe('done');
  });

  it('reads the tokens at the top of a value, nested, in arrays, and next to any separator; never inside strings', async () => {
    const lines = [
      '{"type":"tool_call","name":"a","args":{"x":NaN,"y":[Infinity,-Infinity,{"z":NaN}]},"id":"1"}',
      '{"type": "tool_call", "name": "b", "args": {"s": "NaN Infinity -Infinity", "q": "a \\"NaN\\" b", "n": -Infinity}, "id": "2"}',
      '{"type": "tool_call", "name": "c", "args": {"NaN": NaN, "e": "\\\\", "f": Infinity}, "id": "3"}',
    ];
    const { issues, onDiagnostic } = diagnostics();
    const calls = (await collect(fromJsonl(lines.join('\n'), { onDiagnostic }))) as ToolCallEvent[];
    expect(issues).toEqual([]);
    expect(calls.map((c) => c.args)).toEqual([
      { x: NaN, y: [Infinity, -Infinity, { z: NaN }] },
      { s: 'NaN Infinity -Infinity', q: 'a "NaN" b', n: -Infinity },
      { NaN: NaN, e: '\\', f: Infinity },
    ]);
  });

  it('does not take a string holding control characters for one of its own tokens', async () => {
    // Every short escape and the first control characters, in a string beside a bare NaN.
    const escapes = Array.from({ length: 32 }, (_, i) => `\\u${i.toString(16).padStart(4, '0')}NaN`).join('');
    const line = `{"type": "tool_call", "name": "x", "args": {"s": "${escapes}", "n": NaN}, "id": "1"}`;
    const [call] = (await collect(fromJsonl(line))) as ToolCallEvent[];
    expect(call?.args['n']).toBeNaN();
    expect(call?.args['s']).toBe(Array.from({ length: 32 }, (_, i) => `${String.fromCharCode(i)}NaN`).join(''));
  });

  it('still reports a line that is not JSON, NaN or not', async () => {
    const { issues, onDiagnostic } = diagnostics();
    await collect(fromJsonl('{"type": "tool_call", "args": {"x": NaNa}}\n{"type": nan}\n', { onDiagnostic }));
    expect(issues.map((i) => [i.line, i.kept, i.message.startsWith('not JSON')])).toEqual([
      [1, false, true],
      [2, false, true],
    ]);
  });

  it('reports an integer beyond 2^53 that was rounded, with its line, and still delivers the event, under strict too', async () => {
    const { issues, onDiagnostic } = diagnostics();
    const events = await collect(fromJsonl(fixtureBytes(sweep), { onDiagnostic, strict: true }));
    expect(events.some((e) => e.type === 'tool_call' && e.name === 'configure_sweep')).toBe(true);
    expect(issues).toHaveLength(1);
    const [issue] = issues as [DecodeIssue];
    expect(issue.kept).toBe(true);
    expect(issue.line).toBe(2);
    expect(issue.message).toContain('12345678901234567890');
    expect(issue.message).toContain('rounded to 12345678901234567000');
  });

  it('does not report integers within 2^53, long digit runs in strings, or long fractions', async () => {
    const { issues, onDiagnostic } = diagnostics();
    const line =
      '{"type": "tool_call", "name": "x", "args": {"a": 9007199254740991, "b": -9007199254740991, "s": "12345678901234567890", "f": 0.33333333333333331, "e": 1.2345678901234567e+25}, "id": "1"}';
    await collect(fromJsonl(line, { onDiagnostic }));
    expect(issues).toEqual([]);
    // 2^53, and a number as JavaScript writes it (toJsonl), read back as written: nothing was lost.
    await collect(
      fromJsonl(line.replace('9007199254740991,', '9007199254740992, "x": -48581923704336570,'), { onDiagnostic }),
    );
    expect(issues).toEqual([]);
    await collect(fromJsonl(line.replace('9007199254740991,', '9007199254740993,'), { onDiagnostic }));
    expect(issues.map((i) => i.message)).toEqual([
      'integer 9007199254740993 is beyond ±2^53 and was rounded to 9007199254740992',
    ]);
  });

  it('reports a rounded integer in a field the event type does not name, which the event still carries', async () => {
    const { issues, onDiagnostic } = diagnostics();
    const line =
      '{"type": "tool_result", "name": "x", "content": "ok", "success": true, "elapsed_ns": 12345678901234567891}';
    const [event] = await collect(fromJsonl(line, { onDiagnostic }));
    expect(event).toMatchObject({ type: 'tool_result', elapsed_ns: 12345678901234567000 });
    expect(issues.map((i) => [i.kept, i.message])).toEqual([
      [true, 'integer 12345678901234567891 is beyond ±2^53 and was rounded to 12345678901234567000'],
    ]);
  });

  it('toJsonl writes non-finite numbers as Python does, and fromJsonl reads them back', async () => {
    const events = await collect(fromJsonl(fixtureBytes(sweep)));
    const call = events.find((e) => e.type === 'tool_call')!;
    expect(toJsonl(call)).toContain('"lr":NaN,"clip":Infinity,"floor":-Infinity');
    expect(toJsonl(call)).toContain('"note":"NaN, Infinity and -Infinity stay text in a string"');
    expect(await collect(fromJsonl(events.map(toJsonl).join('')))).toEqual(events);
    // A string that only looks like the marker stays a string.
    const odd = { type: 'text', content: '\u0000NaN' } as const;
    expect(await collect(fromJsonl(toJsonl(odd)))).toEqual([odd]);
  });
});
