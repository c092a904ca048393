import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeIssue, fromJsonl } from '../../src/index.js';
import { decodeLine } from '../../src/events/decode/decodeLine.js';
import { subagentTextAt, textLineAt, thinkingAt } from '../../src/events/decode/textLines.js';
import { collect, diagnostics } from '../support/collect.js';

/** A JSON string as Python's `json.dumps` writes it (every character past ASCII escaped), or as it is. */
const pyString = (s: string, ascii: boolean): string =>
  ascii
    ? JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : JSON.stringify(s);

/** Escapes JSON has and ones it has not, cut short, or running into the closing quote. */
const escapeLike = fc
  .array(
    fc.constantFrom(
      ...['a', 'é', '\\u00e9', '\\ud800', '\\u0000', '\\"', '\\\\', '\\/', '\\n', '\\t'],
      ...['\\x', '\\u12', '\\uZZZZ', '\\', '"', '\t', '\u0001'],
    ),
    { maxLength: 12 },
  )
  .map((parts) => `"${parts.join('')}"`);

/** A string value: well written (short and long), or anything that looks like one. */
const value = fc.oneof(
  fc.tuple(fc.string({ unit: 'binary', maxLength: 40 }), fc.boolean()).map(([s, ascii]) => pyString(s, ascii)),
  fc.tuple(fc.string({ minLength: 200, maxLength: 400 }), fc.boolean()).map(([s, ascii]) => pyString(s, ascii)),
  escapeLike,
  fc.constantFrom('1', 'null', '"a', '""'),
);
const id = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom('0', '00', '01', '-1', '1.0', '1e3', '9007199254740993', '123456789', '1234567890', '"0"', ''),
);
const tail = fc.constantFrom('}', ' }', '', ', "x": 1}');

const thinkingLine = fc.oneof(
  fc.tuple(value, tail).map(([c, t]) => `{"type": "thinking", "content": ${c}${t}`),
  fc.tuple(value, id, tail).map(([c, i, t]) => `{"type": "thinking", "content": ${c}, "id": ${i}${t}`),
);
const subagentTextLine = fc.oneof(
  fc.tuple(value, value, tail).map(([a, c, t]) => `{"type": "subagent_text", "subagent": ${a}, "content": ${c}${t}`),
  fc
    .tuple(value, value, fc.oneof(value, id), tail)
    .map(([a, c, i, t]) => `{"type": "subagent_text", "subagent": ${a}, "content": ${c}, "instance_id": ${i}${t}`),
  fc.tuple(value, value).map(([a, c]) => `{"type": "subagent_text", "content": ${c}, "subagent": ${a}}`),
);
const line = fc.oneof(thinkingLine, subagentTextLine);

/** What the full path makes of a line: a leading blank keeps it off the paths read in place. */
const fullPath = (text: string, n: number) => decodeLine(` ${text}`, n);
/** An event as its JSON, so that fields in another order differ; an issue without the positions the blank shifts. */
const seen = (result: ReturnType<typeof decodeLine>) =>
  result instanceof DecodeIssue
    ? { line: result.line, message: result.message.replace(/\d+/g, 'N') }
    : JSON.stringify(result);

describe('thinking and sub-agent text read in place', () => {
  it('give what the full path gives, fields in the same order, wherever the line lies in a longer text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), line, fc.string({ unit: 'binary' }), (before, text, after) => {
        const whole = `${before}${text}${after}`;
        const taken = textLineAt(whole, before.length, before.length + text.length);
        expect(taken).toEqual(textLineAt(text, 0, text.length));
        const full = fullPath(text, 1);
        if (taken !== undefined) expect(JSON.stringify(taken)).toEqual(seen(full));
        expect(seen(decodeLine(text, 1))).toEqual(seen(full));
      }),
      { numRuns: 3000 },
    );
  });

  it('read the lines the producer writes, with or without their ids', () => {
    const thinking = '{"type": "thinking", "content": "r\\u00e9sum\\u00e9 of the plan", "id": 0}';
    expect(thinkingAt(thinking, 0, thinking.length)).toEqual({
      type: 'thinking',
      content: 'résumé of the plan',
      id: 0,
    });
    const bare = '{"type": "thinking", "content": "plain"}';
    expect(thinkingAt(bare, 0, bare.length)).toEqual({ type: 'thinking', content: 'plain' });
    const sub =
      '{"type": "subagent_text", "subagent": "code-agent", "content": "x \\ud83e\\uddea y", "instance_id": "task:1"}';
    expect(subagentTextAt(sub, 0, sub.length)).toEqual({
      ...{ type: 'subagent_text', subagent: 'code-agent', content: 'x 🧪 y', instance_id: 'task:1' },
    });
    // An id past nine digits is left to JSON.parse, which rounds as it does.
    const big = '{"type": "thinking", "content": "a", "id": 1234567890}';
    expect(thinkingAt(big, 0, big.length)).toBeUndefined();
  });

  it('give the events and diagnostics of the full path through fromJsonl, however the bytes are cut', async () => {
    const lines = fc.array(line, { maxLength: 30 });
    await fc.assert(
      fc.asyncProperty(lines, fc.array(fc.nat(), { maxLength: 20 }), async (texts, at) => {
        const bytes = new TextEncoder().encode(texts.map((t) => `${t}\n`).join(''));
        const points = [...new Set(at.map((a) => a % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [...points, bytes.length].map((p, i, all) => bytes.slice(i === 0 ? 0 : all[i - 1], p));
        const { issues, onDiagnostic } = diagnostics();
        const events = await collect(fromJsonl(chunks, { onDiagnostic }));
        const full = texts.map((t, i) => fullPath(t, i + 1));
        expect(events.map((e) => JSON.stringify(e))).toEqual(
          full.filter((r) => r !== undefined && !(r instanceof DecodeIssue)).map((e) => JSON.stringify(e)),
        );
        // The notes of ids rounded past 2^53 aside: the full path is asked for none.
        expect(issues.filter((issue) => !issue.kept).map((issue) => issue.line)).toEqual(
          full.flatMap((r, i) => (r instanceof DecodeIssue ? [i + 1] : [])),
        );
      }),
      { numRuns: 300 },
    );
  });
});
