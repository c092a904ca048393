import { isLeft } from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { eventCodecs, type EvoEvent, type EvoEventType, type UnknownEvent } from '../events.js';
import { fastGuard } from './fastGuard.js';

/** How much of a bad line a `DecodeIssue` keeps, so a huge bad line cannot pin memory. */
const RAW_LIMIT = 300;
/** How much of a wrong value an issue's message quotes. */
const VALUE_LIMIT = 60;
const WHITESPACE = /^\s*$/;

/** Each known type's guard, built once from its codec. */
const guards = new Map(Object.entries(eventCodecs).map(([type, codec]) => [type, fastGuard(codec)]));

/**
 * A line of the stream that did not decode to an event: not JSON, not an
 * object, no string `type`, a known type with the wrong shape, or longer than
 * `maxLineBytes`. Reported through `onDiagnostic`; decoding goes on.
 */
export class DecodeIssue {
  /** The start of the line, cut to a few hundred characters. */
  readonly raw: string;

  constructor(
    /** 1-based line number in the stream, counting blank lines. */
    readonly line: number,
    raw: string,
    /** What is wrong, with the io-ts path of each failing field for a wrong shape. */
    readonly message: string,
  ) {
    this.raw = raw.length > RAW_LIMIT ? `${raw.slice(0, RAW_LIMIT)}…` : raw;
  }

  toString(): string {
    return `line ${this.line}: ${this.message}`;
  }
}

/**
 * One line of text → the event it holds, a `DecodeIssue`, or `undefined` for
 * a line to skip (blank, or an unknown type without `keepUnknown`).
 *
 * The valid case allocates nothing beyond `JSON.parse`: a guard compiled from
 * the codec runs first, and `decode` (with its Either and error paths) only
 * for a line already known to be wrong, to say why.
 */
export function decodeLine(
  text: string,
  line: number,
  keepUnknown = false,
): EvoEvent | UnknownEvent | DecodeIssue | undefined {
  // A line of blanks is skipped before JSON.parse, whose throw would cost far more.
  if (text.charCodeAt(0) <= 0x20 && WHITESPACE.test(text)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return new DecodeIssue(line, text, `not JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new DecodeIssue(line, text, 'not a JSON object');
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return new DecodeIssue(line, text, 'no string "type" field');
  const guard = guards.get(type);
  if (guard === undefined) return keepUnknown ? (value as UnknownEvent) : undefined;
  if (guard(value)) return value as EvoEvent;
  const result = eventCodecs[type as EvoEventType].decode(value);
  return new DecodeIssue(
    line,
    text,
    `${type}: ${isLeft(result) ? formatValidationErrors(result.left) : 'wrong shape'}`,
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
  return text.length > VALUE_LIMIT ? `${text.slice(0, VALUE_LIMIT)}…` : text;
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
