import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeIssue } from '../../src/index.js';
import { decodeLine } from '../../src/events/decode/decodeLine.js';
import { doneAt } from '../../src/events/decode/doneLine.js';

const LAYOUTS = [
  ['{"type": "done", "content": ', ', "response": '],
  ['{"type":"done","content":', ',"response":'],
] as const;

/** A string as Python's `json.dumps` writes it by default: every character past ASCII as `\uXXXX`. */
function asciiJson(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Strings that could pass for the line's own syntax, and any others. */
const content = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom('', '", "response": "', '","response":"', '"}', '\\', '\u2014 \ud800', 'x", "extra": "x'),
  fc.array(fc.constantFrom('a', '"', ', "response": ', '\\u2014', '}', ' '), { maxLength: 12 }).map((a) => a.join('')),
);

/** A JSON string written either way, or a JSON value that is not a string, or text that is not JSON. */
const written = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(content, fc.boolean()).map(([s, ascii]) => (ascii ? asciiJson(s) : JSON.stringify(s))),
  },
  { weight: 1, arbitrary: fc.constantFrom('1', 'null', '"a" ', ' "a"', '"a', '"\t"', '"\\x"', '["a"]') },
  { weight: 1, arbitrary: content.map((s) => `"${s}"`) },
);

/** The layout's separator, or one as long that names another field or is not JSON. */
const separatorOf = (separator: string) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant(separator) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(separator.replace('r', 'R'), separator.replace(':', ' '), separator.replace(',', ' ')),
    },
  );

/** `done` lines: the same string twice (most), two strings, or the same with something after it. */
const doneLine = fc
  .tuple(fc.constantFrom(...LAYOUTS), written, fc.option(written), fc.constantFrom('}', '}', '}', ' }', ', "x": 1}'))
  .chain(([[opening, separator], first, second, end]) =>
    separatorOf(separator).map((between) => `${opening}${first}${between}${second ?? first}${end}`),
  );

/** What the full path makes of a line: a leading blank keeps it off the `done` path. */
function fullPath(line: string): ReturnType<typeof decodeLine> {
  return decodeLine(` ${line}`, 1);
}

/** Events and issues compared as values; an issue's message loses its positions, which the blank shifts. */
const seen = (result: ReturnType<typeof decodeLine>) =>
  result instanceof DecodeIssue ? { line: result.line, message: result.message.replace(/\d+/g, 'N') } : result;

describe('a done line parsed once', () => {
  it('gives what the full path gives for any line that looks like one', () => {
    fc.assert(
      fc.property(doneLine, (line) => {
        const taken = doneAt(line);
        const full = fullPath(line);
        if (taken !== undefined) {
          expect(taken).toEqual(full);
          expect(Object.keys(taken)).toEqual(['type', 'content', 'response']);
        }
        expect(seen(decodeLine(line, 1))).toEqual(seen(full));
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the producer’s line, with its response once for both fields', () => {
    const narration = 'Done \u2014 notes.md now summarizes attention.\n\u4e2d\u6587';
    for (const [opening, separator] of LAYOUTS) {
      for (const json of [JSON.stringify(narration), asciiJson(narration)]) {
        const event = doneAt(`${opening}${json}${separator}${json}}`);
        expect(event).toEqual({ type: 'done', content: narration, response: narration });
      }
    }
    expect(doneAt('{"type": "done", "content": "", "response": ""}')).toEqual({
      type: 'done',
      content: '',
      response: '',
    });
  });

  it('leaves to the full path a line whose fields differ, or that is more than the two', () => {
    const different = '{"type": "done", "content": "ab", "response": "ba"}';
    expect(doneAt(different)).toBeUndefined();
    expect(decodeLine(different, 1)).toEqual({ type: 'done', content: 'ab', response: 'ba' });
    // The separator's text inside the string lines up with the middle only if the halves are equal JSON strings.
    const inside =
      '{"type": "done", "content": "a\\", \\"response\\": \\"a", "response": "a\\", \\"response\\": \\"a"}';
    expect(doneAt(inside)).toEqual({ type: 'done', content: 'a", "response": "a', response: 'a", "response": "a' });
    expect(doneAt('{"type": "done", "content": "a", "response": "a", "x": 1}')).toBeUndefined();
    expect(doneAt('{"type": "done", "content": "a"}')).toBeUndefined();
  });
});
