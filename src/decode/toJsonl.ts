import type { EvoEvent } from '../events/EvoEvent.js';
import type { UnknownEvent } from '../events/UnknownEvent.js';

/**
 * One event as one JSONL line, newline included; `fromJsonl` reads it back
 * to an equal event. Characters such as U+2028 stay raw: only `\n` ends a line.
 *
 * ```ts
 * events$.pipe(map(toJsonl)).subscribe((line) => file.write(line));
 * ```
 */
export function toJsonl(event: EvoEvent | UnknownEvent): string {
  return `${JSON.stringify(event)}\n`;
}
