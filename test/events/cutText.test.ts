import { describe, expect, it } from 'vitest';
import { cutText } from '../../src/common/cutText.js';

describe('cutText', () => {
  it('keeps text that fits, as it is', () => {
    expect(cutText('', 3)).toBe('');
    expect(cutText('abc', 3)).toBe('abc');
  });

  it('cuts to the limit with the ellipsis in it', () => {
    expect(cutText('abcdef', 4)).toBe('abc…');
    expect(cutText('abcdef', 1)).toBe('…');
    expect(cutText('abcdef', 0)).toBe('…');
  });

  it('never cuts inside a surrogate pair', () => {
    const cut = cutText('ab😀cd', 4);
    expect(cut).toBe('ab…');
    expect(cut.charCodeAt(cut.length - 2)).not.toBe(0xd83d);
    expect(cutText('ab😀cd', 5)).toBe('ab😀…');
  });
});
