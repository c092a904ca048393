// What a failure leaves on a span with content capture off, whatever made the error.
import { describe, expect, it } from 'vitest';
import { ExitError } from '../../index.js';
import { ContentPolicy } from '../../otel/content.js';
import { failureOf } from '../../otel/failure.js';

const off = new ContentPolicy(false);
const stderr = 'Traceback (most recent call last):\nModelError: secret';

describe('failureOf, content off', () => {
  it("takes a run's error by its brand: one made by the other build keeps its short message too", () => {
    const error = new ExitError('EvoSci exited with code 1', { exitCode: 1, stderrTail: stderr });
    // As the CommonJS build's error is to the ESM build's: another class, the same brand.
    const foreign = Object.setPrototypeOf(
      { name: 'ExitError', message: error.message, shortMessage: error.shortMessage, stack: error.stack },
      Object.create(Error.prototype, { [Symbol.for('evosci-rx.EvoSciError')]: { value: true } }),
    ) as Error;
    for (const e of [error, foreign]) {
      const failure = failureOf(e, off);
      expect([failure.type, failure.message]).toEqual(['ExitError', 'EvoSci exited with code 1']);
      expect(JSON.stringify(failure.exception)).not.toContain('secret');
    }
  });

  it("keeps another error's first line, and its code, which names the exception", () => {
    const error = Object.assign(new Error(`cannot read\n${stderr}`), { code: 'ENOENT' });
    const failure = failureOf(error, off);
    expect(failure).toMatchObject({ type: 'Error', message: 'cannot read', exception: { code: 'ENOENT' } });
    expect(JSON.stringify(failure)).not.toContain('secret');
  });

  it("drops a stack that holds the message other than at its head; keeps one of frames only (another engine's)", () => {
    const elsewhere = Object.assign(new Error(`bad\n${stderr}`), { stack: `at f (x.js:1)\nError: bad\n${stderr}` });
    expect(failureOf(elsewhere, off).exception).not.toHaveProperty('stack');
    const frames = Object.assign(new Error(`bad\n${stderr}`), { stack: 'f@x.js:1:1\ng@y.js:2:2' });
    expect(failureOf(frames, off).exception).toMatchObject({ stack: 'f@x.js:1:1\ng@y.js:2:2' });
  });

  it('keeps the first line of a thrown string, and names any other value by its type only', () => {
    expect(failureOf(`boom\n${stderr}`, off)).toEqual({ type: 'string', message: 'boom' });
    expect(failureOf({ secret: true }, off)).toEqual({ type: 'object', message: 'a non-Error object was thrown' });
  });
});
