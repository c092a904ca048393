import type { DoneEvent } from '../codecs.js';
import { jsonString } from './textDelta.js';

/** How a `done` line starts and where its response begins, as Python's `json.dumps` writes them and as compact JSON does. */
const SPACED = '{"type": "done", "content": ';
const SPACED_RESPONSE = ', "response": ';
const COMPACT = '{"type":"done","content":';
const COMPACT_RESPONSE = ',"response":';
const QUOTE = 0x22;
const CLOSING_BRACE = 0x7d;

/**
 * The event of `text` when it is exactly `{"type": "done", "content": S,
 * "response": S}`, the same JSON string twice; `undefined` for anything else.
 * The producer sends its whole narration twice in its last line, which can
 * be tens of megabytes: the string is parsed once, and the event holds it
 * once, as both fields. Its position follows from the line's length, so the
 * only scans are the comparison of the two halves and the parse; the parse
 * succeeds only if the half is one JSON string, and then the line is
 * exactly that object.
 */
export function doneAt(text: string): DoneEvent | undefined {
  if (text.charCodeAt(text.length - 1) !== CLOSING_BRACE) return undefined;
  // Each `startsWith` is given its own constant, which the engine compares in place.
  if (text.startsWith(SPACED)) return halves(text, SPACED.length, SPACED_RESPONSE);
  if (text.startsWith(COMPACT)) return halves(text, COMPACT.length, COMPACT_RESPONSE);
  return undefined;
}

/** The event when `text` is its `opening`, a string, `separator`, the same string, and `}`. */
function halves(text: string, opening: number, separator: string): DoneEvent | undefined {
  const twice = text.length - opening - separator.length - 1;
  const half = twice / 2;
  if (twice < 4 || half % 1 !== 0) return undefined;
  const end = opening + half;
  if (text.charCodeAt(opening) !== QUOTE || text.charCodeAt(end - 1) !== QUOTE) return undefined;
  if (!text.startsWith(separator, end)) return undefined;
  const json = text.slice(opening, end);
  if (json !== text.slice(end + separator.length, text.length - 1)) return undefined;
  const value = jsonString(json);
  return value === undefined ? undefined : { type: 'done', content: value, response: value };
}
