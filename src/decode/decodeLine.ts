import { isLeft } from 'fp-ts/lib/Either.js';
import { eventCodecs } from '../events/eventCodecs.js';
import type { EvoEvent } from '../events/EvoEvent.js';
import type { UnknownEvent } from '../events/UnknownEvent.js';
import { DecodeIssue } from './DecodeIssue.js';
import { formatValidationErrors } from './formatValidationErrors.js';

const WHITESPACE = /^\s*$/;

/**
 * One line of text → the event it holds, a `DecodeIssue`, or `undefined` for
 * a line to skip (blank, or an unknown type without `keepUnknown`).
 *
 * The valid case allocates nothing beyond `JSON.parse`: the codec's `is`
 * guard runs first, and `decode` (with its Either and error paths) only for a
 * line already known to be wrong, to say why.
 */
export function decodeLine(
  text: string,
  line: number,
  keepUnknown = false,
): EvoEvent | UnknownEvent | DecodeIssue | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (WHITESPACE.test(text)) return undefined;
    return new DecodeIssue(line, text, `not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new DecodeIssue(line, text, 'not a JSON object');
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return new DecodeIssue(line, text, 'no string "type" field');
  const codec = eventCodecs[type as EvoEvent['type']];
  if (codec === undefined) return keepUnknown ? (value as UnknownEvent) : undefined;
  if (codec.is(value)) return value;
  const result = codec.decode(value);
  return new DecodeIssue(
    line,
    text,
    `${type}: ${isLeft(result) ? formatValidationErrors(result.left) : 'wrong shape'}`,
  );
}
