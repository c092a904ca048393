/** Whether a UTF-16 unit opens a surrogate pair. */
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * `text` in at most `maxLength` UTF-16 units, with `…` in the last where it
 * was cut, never inside a surrogate pair. A cut is a string of its own: a
 * slice (and a concatenation holding one) points into the text it was cut
 * from, so a short note would keep a 50 MB line alive.
 *
 * ```ts
 * cutText('a long tool argument', 8); // 'a long …'
 * ```
 */
export function cutText(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text;
  let end = Math.max(0, maxLength - 1);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  // Slicing the concatenation flattens it into a string of its own.
  return `${text.slice(0, end)}… `.slice(0, -1);
}
