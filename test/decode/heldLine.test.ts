import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HeldLine, utf8Length, wholeCharacters } from '../../src/decode/HeldLine.js';

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

/** What a run of pieces is: its byte pieces decoded together, its text pieces as they are. */
function expected(pieces: readonly (string | Uint8Array)[]): string {
  let text = '';
  let run: number[] = [];
  const endRun = () => {
    text += utf8.decode(new Uint8Array(run));
    run = [];
  };
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      endRun();
      text += piece;
    } else run.push(...piece);
  }
  endRun();
  return text;
}

describe('HeldLine', () => {
  it('reads back what decoding the pieces whole gives, whatever the pieces and the block size', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(awkwardBytes, awkwardBytes, fc.string({ unit: 'grapheme', maxLength: 6 })), {
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
          expect(held.contents()).toBe(whole);
          // A second read gives the same, and a byte piece's count is exact.
          expect(held.contents()).toBe(whole);
          const bytes = pieces.reduce((n, p) => n + (typeof p === 'string' ? utf8Length(p) : p.length), 0);
          expect(held.length).toBe(bytes);
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
