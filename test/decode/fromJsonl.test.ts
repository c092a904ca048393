import { Readable } from 'node:stream';
import { createReadStream } from 'node:fs';
import fc from 'fast-check';
import { take, firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DecodeError, DecodeIssue, fromJsonl, toJsonl, type EvoEvent } from '../../src/index.js';
import { JsonlDecoder } from '../../src/events/decode/JsonlDecoder.js';
import {
  collect,
  DecodedChunks,
  diagnostics,
  fixtureBytes,
  fixturePath,
  fixtureTruth,
  type Decoded,
} from '../support/collect.js';
import { eventually } from '../support/processes.js';

const utf8 = new TextEncoder();
const decoded = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** Independent oracle: one `JSON.parse` per non-blank line. */
function parseEachLine(text: string): unknown[] {
  return text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

/** Cuts bytes at the given offsets (sorted, deduplicated, in range). */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    chunks.push(bytes.subarray(from, p));
    from = p;
  }
  return chunks;
}

const research = fixtureBytes('research-run.jsonl');
const researchCrlf = fixtureBytes('research-run.utf8-crlf.jsonl');

describe('fromJsonl', () => {
  it('decodes the contract example transcript', async () => {
    const bytes = fixtureBytes('contract-example.jsonl');
    const events = await collect(fromJsonl(bytes));
    expect(events.map((e) => e.type)).toEqual(['thinking', 'tool_call', 'tool_result', 'text', 'usage_stats', 'done']);
    expect(events).toEqual(parseEachLine(decoded(bytes)));
    expect(events[5]).toMatchObject({ response: 'Done — notes.md now summarizes attention.' });
  });

  it('decodes Python-escaped ASCII and raw UTF-8 with CRLF to identical events', async () => {
    const { issues, onDiagnostic } = diagnostics();
    const escaped = await collect(fromJsonl(research, { onDiagnostic }));
    const raw = await collect(fromJsonl(researchCrlf, { onDiagnostic }));
    expect(issues).toEqual([]);
    expect(escaped).toHaveLength(fixtureTruth<{ events: number }>('research-run.jsonl').events);
    expect(raw).toEqual(escaped);
    // The escaped file really is ASCII and the other really is not.
    expect(research.every((b) => b < 0x80)).toBe(true);
    expect(researchCrlf.some((b) => b >= 0x80)).toBe(true);
    const allText = JSON.stringify(escaped);
    expect(allText).toContain('🚀');
    expect(allText).toContain('\u2028');
  });

  it('yields identical events for any chunking of the bytes', async () => {
    const expected = await collect(fromJsonl(researchCrlf));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 200 }), async (offsets) => {
        const events = await collect(fromJsonl(cut(researchCrlf, offsets)));
        expect(events).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('yields identical events for chunks split inside every \\r\\n pair and every multi-byte character', async () => {
    const expected = await collect(fromJsonl(researchCrlf));
    const offsets: number[] = [];
    researchCrlf.forEach((b, i) => {
      if (b === 0x0a || (b & 0xc0) === 0x80) offsets.push(i);
    });
    expect(offsets.length).toBeGreaterThan(100);
    expect(await collect(fromJsonl(cut(researchCrlf, offsets)))).toEqual(expected);
    // One byte at a time, too.
    const single = Array.from(researchCrlf, (b) => Uint8Array.of(b));
    expect(await collect(fromJsonl(single))).toEqual(expected);
  });

  it('yields identical events for any chunking of the text', async () => {
    const text = decoded(researchCrlf);
    const expected = await collect(fromJsonl(text));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 100 }), async (offsets) => {
        const points = [...new Set(offsets.map((o) => o % (text.length + 1)))].sort((a, b) => a - b);
        const chunks = [...points, text.length].map((p, i, all) => text.slice(i === 0 ? 0 : all[i - 1], p));
        expect(await collect(fromJsonl(chunks))).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it('loses no valid event among noise lines, and reports each noise line once with its line number', async () => {
    const lines = decoded(research).split('\n').filter(Boolean);
    const expected = await collect(fromJsonl(research));
    const noise = fc.constantFrom(
      'Loading agent…',
      '{"type": "text", "content": "unterminated',
      '[1, 2, 3]',
      '{"no_type": true}',
      '{"type": "usage_stats", "input_tokens": "many"}',
      '\u001b[32m✓\u001b[0m done',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.nat(lines.length), noise), { maxLength: 20 }), async (inserts) => {
        const mixed = [...lines];
        for (const [at, line] of [...inserts].sort((a, b) => b[0] - a[0])) mixed.splice(at, 0, line);
        const noiseLineNumbers = mixed.flatMap((line, i) => (lines.includes(line) ? [] : [i + 1]));
        const { issues, onDiagnostic } = diagnostics();
        const events = await collect(fromJsonl(mixed.join('\n'), { onDiagnostic }));
        expect(events).toEqual(expected);
        expect(issues.map((issue) => issue.line)).toEqual(noiseLineNumbers);
      }),
      { numRuns: 100 },
    );
  });

  it('skips blank and whitespace-only lines silently and decodes a last line with no newline', async () => {
    const { issues, onDiagnostic } = diagnostics();
    const text = '\n  \r\n{"type": "text", "content": "a"}\r\n\t\n\n{"type": "done", "content": "a", "response": "a"}';
    const events = await collect(fromJsonl(text, { onDiagnostic }));
    expect(events.map((e) => e.type)).toEqual(['text', 'done']);
    expect(issues).toEqual([]);
  });

  it('strips a byte order mark at the start of the stream only', async () => {
    const text = '\ufeff{"type": "text", "content": "a"}\n{"type": "text", "content": "\ufeffb"}\n';
    expect(await collect(fromJsonl(utf8.encode(text)))).toEqual([
      { type: 'text', content: 'a' },
      { type: 'text', content: '\ufeffb' },
    ]);
    expect(await collect(fromJsonl(text))).toEqual([
      { type: 'text', content: 'a' },
      { type: 'text', content: '\ufeffb' },
    ]);
  });

  it('decodes a source that mixes text and byte chunks', async () => {
    const text = decoded(researchCrlf);
    const expected = await collect(fromJsonl(text));
    const bytes = utf8.encode(text);
    const mixed: (string | Uint8Array)[] = [];
    // Alternate at newline-free boundaries inside lines: 997 bytes, then the same span as text, and so on.
    let at = 0;
    let asText = false;
    while (at < bytes.length) {
      let next = Math.min(bytes.length, at + 997);
      while (next < bytes.length && (bytes[next]! & 0xc0) === 0x80) next++;
      const span = bytes.subarray(at, next);
      mixed.push(asText ? new TextDecoder().decode(span) : span);
      asText = !asText;
      at = next;
    }
    expect(await collect(fromJsonl(mixed))).toEqual(expected);
  });

  it('does not treat U+2028 or U+2029 as line ends', async () => {
    const text = `{"type": "text", "content": "a\u2028b\u2029c"}\n`;
    expect(await collect(fromJsonl(text))).toEqual([{ type: 'text', content: 'a\u2028b\u2029c' }]);
  });

  it('counts lines from 1, blank lines included, whether the bad line is in one chunk or many', async () => {
    const text = '{"type": "text", "content": "a"}\n\nnot json\n{"type": "text", "content": "b"}\n{"type": "text"}\n';
    for (const source of [text, Array.from(text)]) {
      const { issues, onDiagnostic } = diagnostics();
      const events = await collect(fromJsonl(source, { onDiagnostic }));
      expect(events).toEqual([
        { type: 'text', content: 'a' },
        { type: 'text', content: 'b' },
      ]);
      expect(issues.map((i) => [i.line, i.raw])).toEqual([
        [3, 'not json'],
        [5, '{"type": "text"}'],
      ]);
    }
  });

  it('errors with a DecodeError in strict mode after delivering the events before the bad line', async () => {
    const text = '{"type": "text", "content": "a"}\n{"type": "text", "content": 1}\n{"type": "text", "content": "c"}\n';
    const seen: EvoEvent[] = [];
    const error = await collect(fromJsonl(Array.from(text), { strict: true }).pipe()).catch((err: unknown) => err);
    await fromJsonl(text, { strict: true })
      .forEach((e) => seen.push(e))
      .catch(() => undefined);
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as DecodeError).issue).toMatchObject({
      line: 2,
      message: 'text: at "content": expected string, got 1',
    });
    expect((error as DecodeError).message).toContain('line 2');
    expect(seen).toEqual([{ type: 'text', content: 'a' }]);
  });

  it('skips unknown types by default and keeps them with keepUnknown', async () => {
    const text = '{"type": "heartbeat", "n": 1}\n{"type": "text", "content": "a"}\n';
    const { issues, onDiagnostic } = diagnostics();
    expect(await collect(fromJsonl(text, { onDiagnostic }))).toEqual([{ type: 'text', content: 'a' }]);
    expect(issues).toEqual([]);
    expect(await collect(fromJsonl(text, { keepUnknown: true }))).toEqual([
      { type: 'unknown', wireType: 'heartbeat', event: { type: 'heartbeat', n: 1 } },
      { type: 'text', content: 'a' },
    ]);
  });

  it('reports and drops a line over maxLineBytes without holding it, then goes on', async () => {
    const long = `{"type": "text", "content": "${'x'.repeat(5000)}"}`;
    const text = `{"type": "text", "content": "a"}\n${long}\n{"type": "text", "content": "b"}\n`;
    const chunks = text.match(/[\s\S]{1,64}/g)!;
    const found: string[] = [];
    const issues: number[] = [];
    const decoder = new DecodedChunks(new JsonlDecoder({ maxLineBytes: 1000 }));
    const take = (decoded: readonly Decoded[]) => {
      for (const d of decoded) {
        if (d instanceof DecodeIssue) issues.push(d.line);
        else found.push((d as { content: string }).content);
      }
    };
    let largestHeld = 0;
    for (const chunk of chunks) {
      take(decoder.write(chunk));
      largestHeld = Math.max(largestHeld, decoder.decoder.partialLine.length);
    }
    take(decoder.end());
    expect(found).toEqual(['a', 'b']);
    expect(issues).toEqual([2]);
    expect(largestHeld).toBeLessThanOrEqual(1064);
    // Counted in UTF-8 bytes: 400 three-byte characters pass 1000 bytes though they are 400 UTF-16 units.
    const cjk = `{"type": "text", "content": "${'語'.repeat(400)}"}\n`;
    const { issues: cjkIssues, onDiagnostic } = diagnostics();
    expect(await collect(fromJsonl(cjk, { maxLineBytes: 1000, onDiagnostic }))).toEqual([]);
    expect(cjkIssues[0]?.message).toMatch(/longer than maxLineBytes/);
  });

  it('decodes a 50 MB line under the limit', async () => {
    const content = 'r'.repeat(50 * 1024 * 1024);
    const line = utf8.encode(
      `{"type": "tool_result", "name": "read_file", "content": "${content}", "success": true, "id": "c1"}\n`,
    );
    const events = await collect(
      fromJsonl(
        Readable.from(
          cut(
            line,
            Array.from({ length: 800 }, (_, i) => i * 65536),
          ),
        ),
      ),
    );
    expect(events).toHaveLength(1);
    expect((events[0] as { content: string }).content.length).toBe(content.length);
  });

  it('turns invalid UTF-8 into U+FFFD without throwing', async () => {
    const bytes = Uint8Array.from([
      ...utf8.encode('{"type": "text", "content": "a'),
      0xff,
      0xc3,
      ...utf8.encode('"}\n'),
    ]);
    expect(await collect(fromJsonl(bytes))).toEqual([{ type: 'text', content: 'a\ufffd\ufffd' }]);
  });

  describe('sources', () => {
    const text = decoded(research);
    const chunks = cut(research, [17, 400, 401, 5000]);
    const sources: [string, () => Parameters<typeof fromJsonl>[0]][] = [
      ['a string', () => text],
      ['a Uint8Array', () => research],
      ['a Buffer', () => Buffer.from(research)],
      ['an array of byte chunks', () => chunks],
      [
        'a generator of strings',
        () =>
          (function* () {
            yield* Array.from(text.match(/[\s\S]{1,100}/g)!);
          })(),
      ],
      [
        'an async generator of bytes',
        () =>
          (async function* () {
            for (const c of chunks) yield c;
          })(),
      ],
      ['a Node Readable', () => Readable.from(chunks)],
      ['a file stream', () => createReadStream(fixturePath('research-run.jsonl'), { highWaterMark: 1024 })],
      [
        'a web ReadableStream',
        () =>
          new ReadableStream<Uint8Array>({
            start(c) {
              chunks.forEach((ch) => c.enqueue(ch));
              c.close();
            },
          }),
      ],
    ];
    it.each(sources)('reads %s', async (_label, source) => {
      expect(await collect(fromJsonl(source()))).toEqual(parseEachLine(text));
    });

    it('errors when the source fails, after the events before the failure', async () => {
      const seen: string[] = [];
      const failing = (async function* () {
        yield '{"type": "text", "content": "a"}\n';
        throw new Error('disk gone');
      })();
      const err = await fromJsonl(failing)
        .forEach((e) => seen.push(e.type))
        .catch((e: Error) => e);
      expect(seen).toEqual(['text']);
      expect((err as Error).message).toBe('disk gone');
    });

    it('is cold: each subscription reads the source again', async () => {
      const source$ = fromJsonl(text);
      expect(await collect(source$)).toEqual(await collect(source$));
    });

    it('rejects an unsupported source', async () => {
      await expect(collect(fromJsonl(42 as never))).rejects.toThrow(/unsupported source/);
    });
  });

  describe('early unsubscribe stops reading', () => {
    const line = '{"type": "text", "content": "x"}\n';

    it('finishes an async iterator and pulls no more', async () => {
      let pulled = 0;
      let finished = false;
      const endless = (async function* () {
        try {
          for (;;) {
            pulled++;
            yield line;
          }
        } finally {
          finished = true;
        }
      })();
      await collect(fromJsonl(endless).pipe(take(3)));
      expect(await eventually(() => finished)).toBe(true);
      expect(pulled).toBeLessThanOrEqual(4);
    });

    it('destroys a Node Readable', async () => {
      const stream = new Readable({
        read() {
          this.push(line);
        },
      });
      await firstValueFrom(fromJsonl(stream));
      expect(await eventually(() => stream.destroyed)).toBe(true);
    });

    it('cancels a web ReadableStream', async () => {
      let cancelled = false;
      const stream = new ReadableStream<string>({
        pull(c) {
          c.enqueue(line);
        },
        cancel() {
          cancelled = true;
        },
      });
      await firstValueFrom(fromJsonl(stream));
      expect(await eventually(() => cancelled)).toBe(true);
    });

    it('stops a sync iterator and the lines of a chunk already read', async () => {
      let pulled = 0;
      const endless = {
        *[Symbol.iterator]() {
          for (;;) {
            pulled++;
            yield line + line;
          }
        },
      };
      const events = await collect(fromJsonl(endless).pipe(take(3)));
      expect(events).toHaveLength(3);
      expect(pulled).toBe(2);
    });
  });

  it('stops decoding the rest of a chunk once the subscriber is gone', async () => {
    const { issues, onDiagnostic } = diagnostics();
    const text = `${'{"type": "text", "content": "x"}\n'.repeat(3)}not json\n`.repeat(100);
    expect(await collect(fromJsonl(text, { onDiagnostic }).pipe(take(2)))).toHaveLength(2);
    expect(await collect(fromJsonl([text], { onDiagnostic }).pipe(take(2)))).toHaveLength(2);
    expect(issues).toEqual([]);
  });

  describe('each event handed on as its line completes', () => {
    // Lines off the text-delta path: each one is one JSON.parse, which counts the lines decoded so far.
    const parsed = '{"type": "thinking", "content": "a\\nb"}\n';
    afterEach(() => vi.restoreAllMocks());

    it('decodes no line of a chunk past the event being delivered', async () => {
      const parse = vi.spyOn(JSON, 'parse');
      const parsedAtEach: number[] = [];
      const chunk = utf8.encode(parsed.repeat(50));
      await fromJsonl([chunk]).forEach(() => parsedAtEach.push(parse.mock.calls.length));
      expect(parsedAtEach).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    });

    it('stops mid-chunk, of bytes or text, when the subscriber leaves: no later line decoded or reported', async () => {
      for (const chunk of [parsed.repeat(3) + 'not json\n', utf8.encode(parsed.repeat(3) + 'not json\n')]) {
        const parse = vi.spyOn(JSON, 'parse');
        const { issues, onDiagnostic } = diagnostics();
        // take(2) unsubscribes from fromJsonl inside the second event's delivery.
        expect(await collect(fromJsonl([chunk, chunk], { onDiagnostic }).pipe(take(2)))).toHaveLength(2);
        expect(parse).toHaveBeenCalledTimes(2);
        expect(issues).toEqual([]);
        vi.restoreAllMocks();
      }
    });
  });

  it('round-trips through toJsonl', async () => {
    const events = await collect(fromJsonl(research));
    expect(await collect(fromJsonl(events.map(toJsonl).join('')))).toEqual(events);
  });
});

describe('JsonlDecoder', () => {
  it('copies the unfinished end of a chunk: a source may reuse its buffer', () => {
    const found: unknown[] = [];
    const decoder = new DecodedChunks(new JsonlDecoder());
    const buffer = Buffer.alloc(64);
    const first = '{"type": "text", "content": "he';
    const second = 'llo"}\n';
    buffer.write(first);
    found.push(...decoder.write(buffer.subarray(0, first.length)));
    buffer.fill(0x20).write(second);
    found.push(...decoder.write(buffer.subarray(0, second.length)));
    found.push(...decoder.end());
    expect(found).toEqual([{ type: 'text', content: 'hello' }]);
  });
});
