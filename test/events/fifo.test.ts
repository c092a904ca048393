import { describe, expect, it } from 'vitest';
import { Fifo } from '../../src/common/Fifo.js';

describe('Fifo', () => {
  it('gives items back in the order they came, and nothing when empty', () => {
    const fifo = new Fifo<number>();
    expect(fifo.shift()).toBeUndefined();
    for (const n of [1, 2, 3]) fifo.push(n);
    expect(fifo.peek()).toBe(1);
    expect([fifo.shift(), fifo.shift()]).toEqual([1, 2]);
    expect(fifo.length).toBe(1);
    expect(fifo.toArray()).toEqual([3]);
    fifo.clear();
    expect(fifo.length).toBe(0);
  });

  it('keeps the order across the drops of its taken prefix', () => {
    const fifo = new Fifo<number>();
    const taken: number[] = [];
    for (let n = 0; n < 10_000; n++) {
      fifo.push(n);
      // Two in, one out: the head passes the compaction point many times with items still held.
      if (n % 2 === 1) taken.push(fifo.shift()!);
    }
    while (fifo.length > 0) taken.push(fifo.shift()!);
    expect(taken).toEqual(Array.from({ length: 10_000 }, (_, n) => n));
  });
});
