import type * as t from 'io-ts';
import { DecodeIssue } from '../errors.js';
import { eventCodecs, type EvoEvent, type EvoEventType, type UnknownEvent, unknownEvent } from '../codecs.js';
import { fastGuard, type Guard } from './fastGuard.js';
import { holdsUnsafeInteger, parsePythonJson, unsafeIntegers } from './pythonJson.js';
import { doneAt } from './doneLine.js';
import { textDeltaAt } from './textDelta.js';
import { cutText } from '../../common/cutText.js';

// Kept importable from here, where the decoder's callers have always found it.
export { DecodeIssue } from '../errors.js';

/** How much of a wrong value an issue's message quotes. */
const VALUE_LIMIT = 60;
const WHITESPACE = /^\s*$/;

/** Each known type's guard, built once from its codec. */
const guards = new Map<string, Guard>(Object.entries(eventCodecs).map(([type, codec]) => [type, fastGuard(codec)]));

/**
 * One line of text → the event it holds, a `DecodeIssue`, or `undefined` for
 * a line to skip (blank, or an unknown type without `keepUnknown`).
 *
 * The JSON is Python's (`json.loads`): bare `NaN`, `Infinity` and `-Infinity`
 * are numbers. An integer beyond ±2^53 is rounded as `JSON.parse` rounds it,
 * and `onNote` is told with a `kept` issue; the event is still returned.
 *
 * The valid case allocates nothing beyond `JSON.parse`: a guard compiled from
 * the codec runs first, and `decode` (with its Either and error paths) only
 * for a line already known to be wrong, to say why.
 */
export function decodeLine(
  text: string,
  line: number,
  keepUnknown = false,
  onNote?: (issue: DecodeIssue) => void,
): EvoEvent | UnknownEvent | DecodeIssue | undefined {
  return textDeltaAt(text, 0, text.length) ?? decodeLineInFull(text, line, keepUnknown, onNote);
}

/** `decodeLine` without its first look for a text delta, for a caller that has looked already. */
export function decodeLineInFull(
  text: string,
  line: number,
  keepUnknown = false,
  onNote?: (issue: DecodeIssue) => void,
): EvoEvent | UnknownEvent | DecodeIssue | undefined {
  // A line of blanks is skipped before JSON.parse, whose throw would cost far more.
  if (text.charCodeAt(0) <= 0x20 && WHITESPACE.test(text)) return undefined;
  const done = doneAt(text);
  if (done !== undefined) return done;
  const value = parse(text, line);
  if (value instanceof DecodeIssue) return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new DecodeIssue(line, text, 'not a JSON object');
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return new DecodeIssue(line, text, 'no string "type" field');
  const guard = guards.get(type);
  let event: EvoEvent | UnknownEvent;
  if (guard === undefined) {
    if (!keepUnknown) return undefined;
    event = unknownEvent(value as UnknownEvent['event']);
  } else if (guard(value)) event = value as EvoEvent;
  else return wrongShape(text, line, type, value);
  // Any field may hold one, the codec's or not: an event keeps the fields its codec does not name.
  if (onNote && holdsUnsafeInteger(value)) noteRounding(text, line, onNote);
  return event;
}

/** The issue of a known type with the wrong shape, each failing field named. */
function wrongShape(text: string, line: number, type: string, value: unknown): DecodeIssue {
  const result = eventCodecs[type as EvoEventType].decode(value);
  // The tag, not fp-ts's `isLeft`: this module is in browser bundles, and a deep import names fp-ts's CommonJS build
  // (`fp-ts/lib`, all Node can load), where io-ts, imported by its bare name, brings bundlers fp-ts's ES modules.
  return new DecodeIssue(
    line,
    text,
    `${type}: ${result._tag === 'Left' ? formatValidationErrors(result.left) : 'wrong shape'}`,
  );
}

/** The value of a line: `JSON.parse`, and Python's reading for a line it rejects. */
function parse(text: string, line: number): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    try {
      return parsePythonJson(text);
    } catch {
      return new DecodeIssue(line, text, `not JSON: ${(err as Error).message}`);
    }
  }
}

/** Tells `onNote` which integers of the line `JSON.parse` rounded (none: the big number was written as a float). */
function noteRounding(text: string, line: number, onNote: (issue: DecodeIssue) => void): void {
  const unsafe = unsafeIntegers(text);
  if (unsafe.length === 0) return;
  const first = unsafe[0]!;
  const more = unsafe.length > 1 ? ` (and ${unsafe.length - 1} more)` : '';
  onNote(
    new DecodeIssue(
      line,
      text,
      `integer ${first.slice(0, VALUE_LIMIT)} is beyond ±2^53 and was rounded to ${String(Number(first)).slice(0, VALUE_LIMIT)}${more}`,
      true,
    ),
  );
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? typeof value;
  } catch {
    // Nested deeper than JSON.stringify's stack: the diagnostic says so instead of failing the stream.
    text = Array.isArray(value) ? '[…]' : typeof value === 'object' ? '{…}' : typeof value;
  }
  return cutText(text, VALUE_LIMIT);
}

/**
 * `at "args": expected UnknownRecord, got "x"` for each failing field. Keys
 * that io-ts adds for the members of an intersection or union are dropped:
 * they name no field of the event.
 */
function formatValidationErrors(errors: t.Errors): string {
  return errors
    .map(({ context, value }) => {
      const path: string[] = [];
      for (let i = 1; i < context.length; i++) {
        const parent = context[i - 1]!.type as { _tag?: string };
        if (parent._tag !== 'IntersectionType' && parent._tag !== 'UnionType') path.push(context[i]!.key);
      }
      const expected = context[context.length - 1]!.type.name;
      return `${path.length ? `at "${path.join('.')}"` : 'event'}: expected ${expected}, got ${show(value)}`;
    })
    .join('; ');
}
