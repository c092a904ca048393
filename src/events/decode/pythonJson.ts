// JSON as Python's `json` module writes it: `allow_nan` on, integers exact
// however large. `JSON.parse` rejects the bare `NaN`, `Infinity` and
// `-Infinity` tokens and rounds integers beyond ±2^53; these helpers read the
// former and detect the latter, and write non-finite numbers back as tokens.
// They run only on lines that need them, never on the text fast path.

const BACKSLASH = 0x5c;
/** Bare tokens Python writes for non-finite floats; `-Infinity` first, so that its `Infinity` is not taken alone. */
const NON_FINITE = /-Infinity|Infinity|NaN/g;
const VALUES: Readonly<Record<string, number>> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity };
/** Escapes JSON must use for these control characters (`\b \t \n \f \r` have short forms and are left out). */
const MARKER_CODES = [0, 1, 2, 3, 4, 5, 6, 7, 11, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30];
const DIGITS_OF_UNSAFE = /\d{16}/;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g;

/** The index just past the string whose opening quote is at `open`. */
function stringEnd(text: string, open: number): number {
  let at = open + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** Calls `visit` with each stretch of `text` outside JSON strings, in order. */
function outsideStrings(text: string, visit: (from: number, to: number) => void): void {
  let at = 0;
  while (at < text.length) {
    const quote = text.indexOf('"', at);
    const to = quote === -1 ? text.length : quote;
    if (to > at) visit(at, to);
    if (quote === -1) return;
    at = stringEnd(text, quote);
  }
}

/**
 * A run of one or two control characters whose JSON escapes `text` does not
 * hold in a row: a string value starting with it cannot come from `text`, so
 * it can mark what we inserted. (JSON can write these characters only as
 * `\u00XX`.) `undefined` only for a text holding every pair.
 */
function freeMarker(text: string): string | undefined {
  const absent = (codes: readonly number[]): boolean =>
    !new RegExp(codes.map((code) => `\\\\u00${code.toString(16).padStart(2, '0')}`).join(''), 'i').test(text);
  for (const code of MARKER_CODES) if (absent([code])) return String.fromCharCode(code);
  for (const first of MARKER_CODES) {
    for (const second of MARKER_CODES) if (absent([first, second])) return String.fromCharCode(first, second);
  }
  return undefined;
}

/**
 * Parses one line as Python's `json.loads` would: `NaN`, `Infinity` and
 * `-Infinity` outside strings are those numbers, in any position; inside
 * strings they are text. Throws as `JSON.parse` does for anything else that
 * is not JSON. Meant for lines `JSON.parse` rejected: it costs a scan and a
 * reviver.
 */
export function parsePythonJson(text: string): unknown {
  const marker = freeMarker(text);
  if (marker === undefined) return JSON.parse(text);
  const escaped = JSON.stringify(marker).slice(1, -1);
  const parts: string[] = [];
  let replaced = false;
  let copied = 0;
  outsideStrings(text, (from, to) => {
    const stretch = text.slice(from, to);
    if (!/NaN|Infinity/.test(stretch)) return;
    parts.push(
      text.slice(copied, from),
      stretch.replace(NON_FINITE, (token) => `"${escaped}${token}"`),
    );
    copied = to;
    replaced = true;
  });
  if (!replaced) return JSON.parse(text);
  parts.push(text.slice(copied));
  return JSON.parse(parts.join(''), (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(marker) && Object.hasOwn(VALUES, value.slice(marker.length))
      ? VALUES[value.slice(marker.length)]
      : value,
  );
}

/** The values still to look at in `holdsUnsafeInteger`, reused: the check runs for every line. */
const pending: unknown[] = [];

/**
 * Whether a parsed value holds a whole number beyond ±2^53: one an integer
 * of the line may have been rounded to (`unsafeIntegers` then says which).
 * Its cost follows the number of values, not the bytes of the strings, and
 * deep nesting costs no stack.
 */
export function holdsUnsafeInteger(value: unknown): boolean {
  pending.push(value);
  try {
    while (pending.length > 0) {
      const v = pending.pop();
      if (typeof v === 'number') {
        if (!Number.isSafeInteger(v) && Number.isInteger(v)) return true;
      } else if (typeof v === 'object' && v !== null) {
        if (Array.isArray(v)) for (const item of v) pending.push(item);
        else for (const key in v) pending.push((v as Record<string, unknown>)[key]);
      }
    }
    return false;
  } finally {
    pending.length = 0;
  }
}

/**
 * The integers of a JSON line whose digits a JavaScript number does not keep
 * (only some beyond ±2^53 can lose any), as written; strings are not looked into. A line without 16
 * digits in a row costs one regular-expression test.
 */
export function unsafeIntegers(text: string): string[] {
  if (!DIGITS_OF_UNSAFE.test(text)) return [];
  const found: string[] = [];
  outsideStrings(text, (from, to) => {
    for (const [token] of text.slice(from, to).matchAll(NUMBER)) {
      // Lost digits are what JavaScript writes back differently: 2^53, or a number a JavaScript
      // program wrote (as `toJsonl` does), reads back as written, and is not reported.
      if (/^-?\d+$/.test(token) && String(Number(token)) !== token) found.push(token);
    }
  });
  return found;
}

/**
 * `JSON.stringify` of a value, with non-finite numbers written as Python
 * writes them (`NaN`, `Infinity`, `-Infinity`) instead of `null`, so that
 * `parsePythonJson` reads back the same value. Costs a second pass only for
 * output that holds `null`. A value with no JSON (`undefined`) gives `''`.
 */
export function stringifyPythonJson(value: unknown): string {
  // `undefined` (and a function) has no JSON: written as nothing.
  const plain = JSON.stringify(value) as string | undefined;
  if (plain === undefined || !plain.includes('null')) return plain ?? '';
  const marker = freeMarker(plain);
  if (marker === undefined) return plain;
  let found = false;
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'number' || Number.isFinite(v)) return v;
    found = true;
    return `${marker}${String(v)}`;
  });
  if (!found) return plain;
  const escaped = JSON.stringify(marker).slice(1, -1);
  return json.replace(/"(?:\\u00[0-9a-f]{2}){1,2}(-Infinity|Infinity|NaN)"/g, (whole, token: string) =>
    whole === `"${escaped}${token}"` ? token : whole,
  );
}
