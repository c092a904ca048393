import type { TextEvent } from '../codecs.js';

/** How a `text` line starts, as Python's `json.dumps` writes it and as compact JSON does. */
const SPACED = '{"type": "text", "content": ';
const COMPACT = '{"type":"text","content":';
/** The character that tells the two apart: a blank after `"type":`, or the quote of its value. */
const TELLING = 8;
const SPACE = 0x20;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSING_BRACE = 0x7d;
/** Characters below this must be escaped inside a JSON string. */
const FIRST_UNESCAPED = 0x20;
const LOWER_U = 0x75;
/** Deltas up to this long are unescaped by hand: one call spreads their characters as arguments. */
const UNESCAPED_BY_HAND = 256;
/** The code unit each escape after a backslash stands for, by its character; 0 where JSON has no such escape. */
const ESCAPES = new Uint8Array(128);
for (const [escape, unit] of Object.entries({ '"': 0x22, '\\': 0x5c, '/': 0x2f, b: 8, f: 12, n: 10, r: 13, t: 9 })) {
  ESCAPES[escape.charCodeAt(0)] = unit;
}
/** The value of each hexadecimal digit by its character; -1 for any other. */
const HEX_DIGITS = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) {
  HEX_DIGITS[digit.toString(16).charCodeAt(0)] = digit;
  HEX_DIGITS[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;
}
/** The code units of the delta being unescaped: reused, so a delta costs no array. */
const units: number[] = [];

/** V8 copies a substring shorter than this instead of pointing into its parent. */
const COPIED_BELOW = 13;

/**
 * `text.slice(from, to)` as a string of its own. A longer slice would point
 * into `text`, a whole decoded batch of some 64 KiB, and keep it alive for as
 * long as the delta is kept (waiting in a summary to be joined, say).
 * Slicing a concatenation makes the engine copy the characters once into a
 * string one longer, and the slice points into that copy instead.
 */
function own(text: string, from: number, to: number): string {
  const slice = text.slice(from, to);
  return to - from < COPIED_BELOW ? slice : (slice + ' ').slice(0, -1);
}

/**
 * The event of the line `text.slice(start, end)` when it is exactly
 * `{"type": "text", "content": <string>}`; `undefined` for anything else.
 * Text deltas are most of a run's lines. A delta with no backslash, and so no
 * escape (most of them), is the characters between its quotes, taken without
 * parsing; a short one with escapes is unescaped here, a longer one parsed as
 * a string alone, which costs `JSON.parse` far less than an object. A quote,
 * a control character or a broken escape inside is not JSON: such a line is
 * left to the full path, which reports it.
 */
export function textDeltaAt(text: string, start: number, end: number): TextEvent | undefined {
  if (text.charCodeAt(end - 1) !== CLOSING_BRACE) return undefined;
  // Each `startsWith` is given its own constant, which the engine compares in place.
  let open: number;
  if (text.charCodeAt(start + TELLING) === SPACE) {
    if (!text.startsWith(SPACED, start)) return undefined;
    open = start + SPACED.length;
  } else {
    if (!text.startsWith(COMPACT, start)) return undefined;
    open = start + COMPACT.length;
  }
  const close = end - 2;
  if (close > open && text.charCodeAt(open) === QUOTE && text.charCodeAt(close) === QUOTE) {
    let at = open + 1;
    while (at < close) {
      const c = text.charCodeAt(at);
      if (c === BACKSLASH || c === QUOTE || c < FIRST_UNESCAPED) break;
      at++;
    }
    if (at === close) return { type: 'text', content: own(text, open + 1, close) };
    const content = close - open <= UNESCAPED_BY_HAND ? unescaped(text, open + 1, close) : undefined;
    if (content !== undefined) return { type: 'text', content };
  }
  const content = jsonString(text.slice(open, end - 1));
  return content === undefined ? undefined : { type: 'text', content };
}

/**
 * The string whose JSON body (between its quotes) is `text.slice(from, to)`,
 * read as `JSON.parse` reads it; `undefined` if it is not one. Most escaped
 * deltas are a few characters and `\uXXXX` escapes (Python escapes every
 * character past ASCII), for which `JSON.parse` costs more in starting up
 * than in reading.
 */
function unescaped(text: string, from: number, to: number): string | undefined {
  units.length = 0;
  for (let at = from; at < to; at++) {
    let unit = text.charCodeAt(at);
    if (unit === BACKSLASH) {
      const escape = at + 1 < to ? text.charCodeAt(++at) : 0;
      if (escape === LOWER_U) {
        unit = at + 4 < to ? hexUnit(text, at + 1) : -1;
        at += 4;
      } else unit = escape < ESCAPES.length && ESCAPES[escape] !== 0 ? ESCAPES[escape]! : -1;
      if (unit < 0) return undefined;
    } else if (unit === QUOTE || unit < FIRST_UNESCAPED) return undefined;
    units.push(unit);
  }
  return String.fromCharCode(...units);
}

/** The code unit written as four hexadecimal digits at `at`; -1 if they are not. */
function hexUnit(text: string, at: number): number {
  let unit = 0;
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i);
    const digit = c < HEX_DIGITS.length ? HEX_DIGITS[c]! : -1;
    if (digit < 0) return -1;
    unit = (unit << 4) | digit;
  }
  return unit;
}

/** The string `json` holds; `undefined` unless it is one JSON string (not another key after it, say). */
export function jsonString(json: string): string | undefined {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
