import type { TextEvent } from '../events.js';

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
 * parsing; another is parsed as a string alone, which costs `JSON.parse` far
 * less than an object. A quote or a control character inside is not JSON:
 * such a line is left to the full path, which reports it.
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
  }
  return parsedDelta(text.slice(open, end - 1));
}

/** The delta of a string with escapes; `undefined` unless `json` is one JSON string (another key after it, say). */
function parsedDelta(json: string): TextEvent | undefined {
  try {
    const content: unknown = JSON.parse(json);
    return typeof content === 'string' ? { type: 'text', content } : undefined;
  } catch {
    return undefined;
  }
}
