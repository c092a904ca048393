// A run's error read back from the wire: its class name is outside input.
import { describe, expect, it } from 'vitest';
import { EvoSciError, ExitError, runErrorOf } from '../../src/events/errors.js';

const details = { exitCode: 1 } as const;

describe('runErrorOf', () => {
  it('gives the class a known name names', () => {
    const error = runErrorOf('ExitError', 'exit 1', details);
    expect([error instanceof ExitError, error.message]).toEqual([true, 'exit 1']);
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'Object'])(
    'makes an EvoSciError of a name that is no class of its table, here %s',
    (name) => {
      const error = runErrorOf(name, 'boom', details, { Extra: ExitError });
      expect(error).toBeInstanceOf(EvoSciError);
      expect([error.constructor, error.message]).toEqual([EvoSciError, `${name}: boom`]);
    },
  );
});
