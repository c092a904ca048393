// Options are checked where they enter the library, before anything starts,
// and every mistake is said one way: a `TypeError` reading
// `fn: name must be …, got …`, naming the call and the option.
import { cutText } from './cutText.js';

/** A wrong value as a message shows it: a string quoted and cut, anything else as text. */
function shown(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(cutText(value, 80)) : String(value);
}

/** The mistake in option `name` of `fn`: it must be `rule`. */
export function optionError(fn: string, name: string, rule: string, value: unknown): TypeError {
  return new TypeError(`${fn}: ${name} must be ${rule}, got ${shown(value)}`);
}

/** `value`, a whole number of at least `min`. */
export function wholeAtLeast(fn: string, name: string, value: number, min: number): number {
  if (!(Number.isSafeInteger(value) && value >= min)) throw optionError(fn, name, `a whole number ≥ ${min}`, value);
  return value;
}

/** `value`, a number of at least `min` (`Infinity` included). */
export function atLeast(fn: string, name: string, value: number, min: number): number {
  if (!(typeof value === 'number' && value >= min)) throw optionError(fn, name, `a number ≥ ${min}`, value);
  return value;
}

/** `value`, a number above `min` (`Infinity` included). */
export function above(fn: string, name: string, value: number, min: number): number {
  if (!(typeof value === 'number' && value > min)) throw optionError(fn, name, `a number > ${min}`, value);
  return value;
}
