// The error family recognised across copies of the library (the ESM source
// and the built files here, as an ESM and a CommonJS build would be), and
// serialised from its short message, never by parsing the long one.
import { describe, expect, it } from 'vitest';
import * as source from '../../src/events/errors.js';
import { serializeError } from '../../src/jetstream/index.js';

describe('the EvoSciError family', () => {
  it('is recognised by its brand and class name across two copies of the library', async () => {
    // The built copy, loaded by URL: the build's own program must not take its output as input.
    const built = (await import(new URL('../../dist/src/events/errors.js', import.meta.url).href)) as typeof source;
    expect(built.TimeoutError).not.toBe(source.TimeoutError);
    const other = new built.TimeoutError('took too long', { stderrTail: 'x' });
    expect(other).toBeInstanceOf(source.EvoSciError);
    expect(other).toBeInstanceOf(source.TimeoutError);
    expect(other).not.toBeInstanceOf(source.ExitError);
    expect(source.EvoSciError.is(other)).toBe(true);
    expect(source.EvoSciError.is(new Error('plain'))).toBe(false);
    expect(new Error('plain')).not.toBeInstanceOf(source.EvoSciError);
    expect(serializeError(other)).toMatchObject({ class: 'TimeoutError', message: 'took too long', stderrTail: 'x' });
  });

  it('keeps the short message beside the message with the stderr lines', () => {
    const error = new source.ExitError('exited with code 1\n--- last stderr lines ---\nnot a tail', {
      exitCode: 1,
      stderrTail: 'Traceback\nboom\n',
    });
    expect(error.message).toBe(
      'exited with code 1\n--- last stderr lines ---\nnot a tail\n--- last stderr lines ---\nTraceback\nboom',
    );
    expect(error.shortMessage).toBe('exited with code 1\n--- last stderr lines ---\nnot a tail');
    expect(serializeError(error).message).toBe(error.shortMessage);
  });
});
