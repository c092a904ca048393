// Byte-heavy input in the chunks a browser's fetch or a 1 MiB file read hands over: lines of a few KB
// that cross the chunks' ends and the decoder's own batches, with characters of every UTF-8 length cut
// at those ends, decoded as the whole input decoded at once is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeIssue, fromJsonl } from '../../src/index.js';
import { decodeLine } from '../../src/events/decode/decodeLine.js';
import { collect, diagnostics } from '../support/collect.js';

const MiB = 1 << 20;

/** A tool result of ~3 KB: raw characters of one to four UTF-8 bytes, escapes, and the odd broken line. */
function resultLine(i: number): string {
  const content = `line ${i}\t"quoted" é€😀 ${'x'.repeat(i % 97)} `.repeat(40 + (i % 30));
  if (i % 211 === 0) return `{"type": "tool_result", "name": "read_file", "content": ${JSON.stringify(content)}`;
  return `{"type": "tool_result", "name": "read_file", "content": ${JSON.stringify(content)}, "success": true, "id": "c${i}"}`;
}

/** Some 3.6 MiB of lines: mostly results, with calls and text deltas between them. */
const lines = Array.from({ length: 2400 }, (_, i) =>
  i % 3 === 0
    ? `{"type": "tool_call", "name": "read_file", "args": {"file_path": "/src/a_${i}.py"}, "id": "c${i + 1}"}`
    : i % 3 === 1
      ? `{"type": "text", "content": "d\\u00e9lta ${i}"}`
      : resultLine(i),
);
const whole = new TextEncoder().encode(lines.map((line) => `${line}\n`).join(''));

/** What each line gives decoded alone: the events, and the lines of the issues. */
const expected = lines.map((line, i) => decodeLine(line, i + 1));

/** A web stream handing over `whole` in chunks of the given sizes, in turn. */
function webStream(sizes: readonly number[]): ReadableStream<Uint8Array> {
  let at = 0;
  let turn = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= whole.length) return controller.close();
      const size = sizes[turn++ % sizes.length]!;
      // A copy, as fetch hands each chunk in a buffer of its own.
      controller.enqueue(whole.slice(at, at + size));
      at += size;
    },
  });
}

describe('large chunks of byte-heavy lines', () => {
  it('from a web ReadableStream, in chunks of 1 MiB and more cut anywhere, decode as the whole input line by line', async () => {
    expect(whole.length).toBeGreaterThan(3 * MiB);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: MiB, max: 2 * MiB }), { minLength: 1, maxLength: 4 }),
        async (sizes) => {
          const { issues, onDiagnostic } = diagnostics();
          const events = await collect(fromJsonl(webStream(sizes), { onDiagnostic }));
          expect(events).toEqual(expected.filter((r) => r !== undefined && !(r instanceof DecodeIssue)));
          expect(issues.map((issue) => issue.line)).toEqual(
            expected.flatMap((r, i) => (r instanceof DecodeIssue ? [i + 1] : [])),
          );
        },
      ),
      { numRuns: 12 },
    );
  });
});
