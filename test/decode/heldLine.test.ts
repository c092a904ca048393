import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HeldLine, utf8Length, wholeCharacters } from '../../src/events/decode/HeldLine.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
const encoder = new TextEncoder();

/** Bytes a UTF-8 decoder must take care with: valid characters of every length, cut anywhere, and invalid bytes. */
const awkwardBytes = fc.oneof(
  fc.uint8Array({ maxLength: 24 }),
  fc
    .string({ unit: 'grapheme', maxLength: 8 })
    .chain((s) => fc.nat(encoder.encode(s).length).map((n) => encoder.encode(s).subarray(n))),
  fc.constantFrom(
    ...[[0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xe2], [0x80, 0x80], [0xe0, 0x80], [0xf8, 0x80], [0xc3, 0xa9]].map(
      (b) => new Uint8Array(b),
    ),
  ),
);

/** Text pieces with whole characters, and with surrogates alone or split between pieces. */
const awkwardText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.constantFrom('\ud83d', '\ude00', 'a\ud83d', '\ude00b', '\ud800\u4e00', 'x\udc00\ud800'),
);

/** Consecutive pieces of one kind; an empty text piece is nothing between two byte pieces. */
function runs(pieces: readonly (string | Uint8Array)[]): (string | Uint8Array)[] {
  const joined: (string | Uint8Array)[] = [];
  for (const piece of pieces) {
    if (piece === '') continue;
    const last = joined.at(-1);
    if (typeof piece === 'string' && typeof last === 'string') joined[joined.length - 1] = last + piece;
    else if (typeof piece !== 'string' && last instanceof Uint8Array)
      joined[joined.length - 1] = new Uint8Array([...last, ...piece]);
    else joined.push(piece);
  }
  return joined;
}

/** What pieces are: each run of bytes decoded whole, each run of text as an encoder writes it (a lone surrogate as U+FFFD). */
function expected(pieces: readonly (string | Uint8Array)[]): { text: string; bytes: number } {
  let text = '';
  let bytes = 0;
  for (const run of runs(pieces)) {
    const encoded = typeof run === 'string' ? encoder.encode(run) : run;
    text += utf8.decode(encoded);
    bytes += encoded.length;
  }
  return { text, bytes };
}

describe('HeldLine', () => {
  it('reads back what decoding the pieces whole gives, whatever the pieces and the block size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(awkwardBytes, awkwardBytes, awkwardText), {
          maxLength: 20,
        }),
        fc.integer({ min: 1, max: 16 }),
        (pieces, blockSize) => {
          const held = new HeldLine(utf8, blockSize);
          for (const piece of pieces) {
            if (typeof piece === 'string') held.text(piece);
            else held.bytes(piece);
          }
          const whole = expected(pieces);
          expect(held.contents()).toBe(whole.text);
          // A second read gives the same, and the count is the UTF-8 the line is.
          expect(held.contents()).toBe(whole.text);
          expect(held.length).toBe(whole.bytes);
          held.clear();
          expect(held.contents()).toBe('');
          expect(held.length).toBe(0);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives the start of the line up to a number of bytes, never half a character', () => {
    const held = new HeldLine(utf8, 4);
    for (const piece of ['ab', 'é語', '😀x']) held.bytes(encoder.encode(piece));
    expect(held.contents(5)).toBe('abé');
    expect(held.contents(6)).toBe('abé');
    expect(held.contents(7)).toBe('abé語');
    expect(held.contents(10)).toBe('abé語');
    expect(held.contents(11)).toBe('abé語😀');
    expect(held.contents()).toBe('abé語😀x');
  });

  it('holds a line of many small text pieces in its size, not a string per piece', () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const held = new HeldLine(utf8);
    for (let i = 0; i < 2_000_000; i++) held.text('abc');
    gc();
    // 6 MB of text in 64 KiB blocks decoded as they fill; a string and a slot per piece would be some 60 MB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(16e6);
    expect(held.length).toBe(6_000_000);
    expect(held.contents()).toBe('abc'.repeat(2_000_000));
  });

  it('counts a lone surrogate as the 3 bytes an encoder writes for it', () => {
    expect(utf8Length('\ud800\u4e00')).toBe(6);
    expect(utf8Length('\ud83d\ude00')).toBe(4);
    const held = new HeldLine(utf8);
    held.text('\ud800');
    held.bytes(new Uint8Array([0x61]));
    expect([held.length, held.contents()]).toEqual([4, '\ufffda']);
  });

  it('keeps a pair split between text pieces whole, counted as 4 bytes', () => {
    const held = new HeldLine(utf8);
    held.text('a\ud83d');
    expect(held.length).toBe(4);
    held.text('\ude00');
    expect(held.length).toBe(5);
    expect(held.contents()).toBe('a😀');
  });
});

describe('wholeCharacters', () => {
  it('cuts before a character that is not complete, and nowhere else', () => {
    const cases: [number[], number][] = [
      [[0x61, 0x62], 2],
      [[0x61, 0xe2, 0x82], 1],
      [[0x61, 0xe2, 0x82, 0xac], 4],
      [[0xf0, 0x9f, 0x98], 0],
      [[0xf0, 0x9f, 0x98, 0x80], 4],
      [[0x80, 0x80, 0x80, 0x80], 4],
      [[0xc3], 0],
      [[], 0],
    ];
    for (const [bytes, length] of cases) expect(wholeCharacters(new Uint8Array(bytes))).toBe(length);
  });
});
