import type { SubagentTextEvent, ThinkingEvent } from '../codecs.js';
import { jsonString, own, textDeltaAt, unescaped, UNESCAPED_BY_HAND } from './textDelta.js';

// Thinking and sub-agent text come, as text deltas do, in lines of a few fields of short strings:
// next to tool results they are most of a run's lines, and `JSON.parse` costs them more in
// starting up than in reading.

/** How the lines start, as Python's `json.dumps` writes them. */
const THINKING = '{"type": "thinking", "content": ';
const SUBAGENT_TEXT = '{"type": "subagent_text", "subagent": ';
const CONTENT = ', "content": ';
const ID = ', "id": ';
const INSTANCE_ID = ', "instance_id": ';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSING_BRACE = 0x7d;
const ZERO = 0x30;
const NINE = 0x39;
/** Characters below this must be escaped inside a JSON string. */
const FIRST_UNESCAPED = 0x20;
/** Digits of an id read by hand: any more and it is left to `JSON.parse`, which rounds as it does. */
const ID_DIGITS = 9;

/** Where the value read last by `stringAt` or `idAt` ended: the index after it. */
let after = 0;

/**
 * The string whose JSON starts with the quote at `at` and ends before
 * `limit`, read as `JSON.parse` reads it; `undefined` if there is none
 * (a control character inside, a broken escape, no closing quote).
 */
function stringAt(text: string, at: number, limit: number): string | undefined {
  if (text.charCodeAt(at) !== QUOTE) return undefined;
  let escaped = false;
  let close = at + 1;
  for (; close < limit; close++) {
    const c = text.charCodeAt(close);
    if (c === QUOTE) break;
    if (c === BACKSLASH) {
      escaped = true;
      close++;
    } else if (c < FIRST_UNESCAPED) return undefined;
  }
  if (close >= limit) return undefined;
  after = close + 1;
  if (!escaped) return own(text, at + 1, close);
  return close - at - 1 <= UNESCAPED_BY_HAND ? unescaped(text, at + 1, close) : jsonString(text.slice(at, after));
}

/** The non-negative integer of up to `ID_DIGITS` digits written at `at`, ending at `limit`, as JSON writes it. */
function idAt(text: string, at: number, limit: number): number | undefined {
  const digits = limit - at;
  if (digits < 1 || digits > ID_DIGITS || (digits > 1 && text.charCodeAt(at) === ZERO)) return undefined;
  let id = 0;
  for (let i = at; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) return undefined;
    id = id * 10 + (c - ZERO);
  }
  after = limit;
  return id;
}

/**
 * The event of the line `text.slice(start, end)` when it is exactly
 * `{"type": "thinking", "content": <string>}`, with `"id": <integer>` after
 * or not; `undefined` for anything else, which the full path reads.
 */
export function thinkingAt(text: string, start: number, end: number): ThinkingEvent | undefined {
  const last = end - 1;
  if (text.charCodeAt(last) !== CLOSING_BRACE || !text.startsWith(THINKING, start)) return undefined;
  const content = stringAt(text, start + THINKING.length, last);
  if (content === undefined) return undefined;
  if (after === last) return { type: 'thinking', content };
  if (!text.startsWith(ID, after)) return undefined;
  const id = idAt(text, after + ID.length, last);
  return id === undefined ? undefined : { type: 'thinking', content, id };
}

/**
 * The event of the line `text.slice(start, end)` when it is exactly
 * `{"type": "subagent_text", "subagent": <string>, "content": <string>}`,
 * with `"instance_id": <string>` after or not; `undefined` for anything else.
 */
export function subagentTextAt(text: string, start: number, end: number): SubagentTextEvent | undefined {
  const last = end - 1;
  if (text.charCodeAt(last) !== CLOSING_BRACE || !text.startsWith(SUBAGENT_TEXT, start)) return undefined;
  const subagent = stringAt(text, start + SUBAGENT_TEXT.length, last);
  if (subagent === undefined || !text.startsWith(CONTENT, after)) return undefined;
  const content = stringAt(text, after + CONTENT.length, last);
  if (content === undefined) return undefined;
  if (after === last) return { type: 'subagent_text', subagent, content };
  if (!text.startsWith(INSTANCE_ID, after)) return undefined;
  const instance = stringAt(text, after + INSTANCE_ID.length, last);
  return instance === undefined || after !== last
    ? undefined
    : { type: 'subagent_text', subagent, content, instance_id: instance };
}

/**
 * The event of a text, thinking or sub-agent text line read in place, without
 * `JSON.parse`; `undefined` for any other line, and for one of these the full
 * path must read (escapes it cannot tell, fields in another order, another spacing).
 */
export function textLineAt(
  text: string,
  start: number,
  end: number,
): ReturnType<typeof textDeltaAt> | ThinkingEvent | SubagentTextEvent | undefined {
  return textDeltaAt(text, start, end) ?? thinkingAt(text, start, end) ?? subagentTextAt(text, start, end);
}
