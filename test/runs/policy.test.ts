// What a start request may hold, checked where it enters: its sizes in the
// bytes it takes, not in characters.
import { describe, expect, it } from 'vitest';
import { RunRequestError } from '../../src/runs/errors.js';
import { checkStartRequest } from '../../src/runs/policy.js';

/** Metadata whose JSON (`{"note":"…"}`, 11 bytes around the text) is `bytes` long, in characters of `width` bytes. */
function metadataOf(bytes: number, char: string): Record<string, string> {
  const width = Buffer.byteLength(char);
  const text = char.repeat(Math.floor((bytes - 11) / width));
  const metadata = { note: text + 'x'.repeat(bytes - 11 - Buffer.byteLength(text)) };
  expect(Buffer.byteLength(JSON.stringify(metadata))).toBe(bytes);
  return metadata;
}

describe('checkStartRequest', () => {
  it.each(['é', '€', '😀'])('takes metadata of 16 KiB of UTF-8 and refuses one byte more, in %s', (char) => {
    expect(checkStartRequest({ prompt: 'p', metadata: metadataOf(16 * 1024, char) }).metadata).toBeDefined();
    const over = metadataOf(16 * 1024 + 1, char);
    // Far fewer characters than bytes: counting characters would let it through.
    expect(JSON.stringify(over).length).toBeLessThan(12 * 1024);
    expect(() => checkStartRequest({ prompt: 'p', metadata: over })).toThrow(RunRequestError);
    expect(() => checkStartRequest({ prompt: 'p', metadata: over })).toThrow('metadata is over 16384 bytes');
  });
});
