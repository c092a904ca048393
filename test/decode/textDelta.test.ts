import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeIssue, fromJsonl } from '../../src/index.js';
import { decodeLine } from '../../src/events/decode/decodeLine.js';
import { textDeltaAt } from '../../src/events/decode/textDelta.js';
import { collect, diagnostics, fixtureBytes } from '../support/collect.js';

const utf8 = new TextEncoder();
const PREFIXES = ['{"type": "text", "content": ', '{"type":"text","content":'] as const;
/** Neither a line end nor a character JSON must escape: what a delta taken by slicing holds. */
const SLICEABLE = /^[^"\\\u0000-\u001f]*$/;

/** Delta contents with nothing to unescape, ASCII and not, short (copied by the engine) and long. */
const plainContent = fc
  .oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ minLength: 13, maxLength: 200 }),
  )
  .filter((s) => SLICEABLE.test(s));

/** Escapes JSON has and ones it has not, cut short, or running into the closing quote. */
const escapeLike = fc
  .array(
    fc.constantFrom(
      ...['a', 'é', '\\u00e9', '\\u00E9', '\\ud800', '\\udc00', '\\u0000', '\\u001F', '\\"', '\\\\', '\\/'],
      ...['\\b', '\\f', '\\n', '\\r', '\\t', '\\x', '\\U00e9', '\\u12', '\\uZZZZ', '\\u-123', '\\', '"', '\t'],
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

/** A delta with no escape, with an escape, or a line that only looks like one. */
const textLine = fc.oneof(
  fc.tuple(fc.constantFrom(...PREFIXES), escapeLike).map(([prefix, s]) => `${prefix}"${s}"}`),
  fc.tuple(fc.constantFrom(...PREFIXES), plainContent).map(([prefix, s]) => `${prefix}"${s}"}`),
  fc
    .tuple(fc.constantFrom(...PREFIXES), fc.string({ unit: 'binary', maxLength: 40 }))
    .map(([prefix, s]) => `${prefix}${JSON.stringify(s)}}`),
  fc
    .tuple(
      fc.constantFrom(...PREFIXES),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('"}', '}', ' }', '"', '" }', '", "x": 1}'),
    )
    .map(([prefix, s, end]) => `${prefix}"${s}${end}`),
  fc
    .tuple(fc.constantFrom(...PREFIXES), fc.constantFrom('\t', '\u0001', '\u001f', '"'), plainContent)
    .map(([prefix, bad, s]) => `${prefix}"${s}${bad}${s}"}`),
);

/** Lines of a real run (other event types, Python escapes) and lines that are not events. */
const otherLine = fc.constantFrom(
  ...new TextDecoder()
    .decode(fixtureBytes('research-run.jsonl'))
    .split('\n')
    .filter((line) => line && !line.startsWith(PREFIXES[0]))
    .slice(0, 40),
  'not json',
  '',
  '   ',
  '{"type": "text"}',
  '{"type": "text", "content": 1}',
);

/** What the full path makes of a line: a leading blank keeps it off the text-delta path. */
function fullPath(line: string, number: number): ReturnType<typeof decodeLine> {
  return decodeLine(` ${line}`, number);
}

/** Events and issues compared as values; an issue's message loses its positions, which the blank shifts. */
const seen = (result: ReturnType<typeof decodeLine>) =>
  result instanceof DecodeIssue ? { line: result.line, message: result.message.replace(/\d+/g, 'N') } : result;

/** Cuts a sequence at the given offsets. */
function cut<T extends string | Uint8Array>(whole: T, offsets: number[]): T[] {
  const points = [...new Set(offsets.map((o) => o % (whole.length + 1)))].sort((a, b) => a - b);
  return [...points, whole.length].map((p, i, all) => whole.slice(i === 0 ? 0 : all[i - 1], p) as T);
}

describe('text deltas taken by slicing', () => {
  it('give what the full path gives, wherever the line lies in a longer text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), textLine, fc.string({ unit: 'binary' }), (before, line, after) => {
        const whole = `${before}${line}${after}`;
        const taken = textDeltaAt(whole, before.length, before.length + line.length);
        expect(taken).toEqual(textDeltaAt(line, 0, line.length));
        const full = fullPath(line, 1);
        if (taken !== undefined) expect(taken).toEqual(full);
        expect(seen(decodeLine(line, 1))).toEqual(seen(full));
      }),
      { numRuns: 3000 },
    );
  });

  it('keep a delta of any length whole, its characters its own', () => {
    const long = 'é'.repeat(5000);
    const text = `${'x'.repeat(100)}{"type": "text", "content": "${long}"}\n`;
    expect(textDeltaAt(text, 100, text.length - 1)).toEqual({ type: 'text', content: long });
    expect(textDeltaAt('{"type": "text", "content": ""}', 0, 31)).toEqual({ type: 'text', content: '' });
    expect(textDeltaAt('{"type": "text", "content": "}', 0, 30)).toBeUndefined();
  });

  it('give the events and diagnostics of the full path for any lines, line ends and chunking', async () => {
    const lines = fc.array(fc.tuple(fc.oneof(textLine, textLine, otherLine), fc.constantFrom('\n', '\r\n')), {
      maxLength: 40,
    });
    await fc.assert(
      fc.asyncProperty(lines, fc.array(fc.nat(), { maxLength: 30 }), fc.boolean(), async (numbered, at, asText) => {
        const text = numbered.map(([line, end]) => line + end).join('');
        const full = numbered.map(([line], i) => fullPath(line, i + 1));
        const { issues, onDiagnostic } = diagnostics();
        const source = asText ? cut(text, at) : cut(utf8.encode(text), at);
        const events = await collect(fromJsonl(source, { onDiagnostic }));
        expect(events).toEqual(full.filter((r) => r !== undefined && !(r instanceof DecodeIssue)));
        // Each issue as the line alone gives it (an empty line is skipped before), for the lines the full path rejects.
        const lineIssues = numbered.map(([line], i) => (line === '' ? undefined : decodeLine(line, i + 1)));
        expect(issues).toEqual(lineIssues.filter((r) => r instanceof DecodeIssue));
        expect(issues.map((issue) => issue.line)).toEqual(
          full.flatMap((r, i) => (r instanceof DecodeIssue ? [i + 1] : [])),
        );
      }),
      { numRuns: 300 },
    );
  });
});
