// `run --replay FILE`: a recorded transcript played as a live run, at the
// pace it was recorded (each event's `elapsed_ms`), for demos and UI work.
import { concatMap, defer, delay, of, type Observable } from 'rxjs';
import { fromJsonlFile } from '../src/files/fromJsonlFile.js';
import type { EvoEvent } from '../src/events/codecs.js';
import type { DecodeIssue } from '../src/events/errors.js';

/** The pause before each event of a recording without times. */
const UNTIMED_GAP_MS = 40;

/** The time an event was written at, if its recording says so. */
function elapsedOf(event: EvoEvent): number | undefined {
  const elapsed = (event as { elapsed_ms?: unknown }).elapsed_ms;
  return typeof elapsed === 'number' && Number.isFinite(elapsed) && elapsed >= 0 ? elapsed : undefined;
}

/**
 * The events of a recording, each after the pause that preceded it when it
 * was recorded (`UNTIMED_GAP_MS` when it carries no time), `speed` times as fast.
 */
export function replay$(file: string, speed: number, onDiagnostic: (issue: DecodeIssue) => void): Observable<EvoEvent> {
  return defer(() => {
    let previous = 0;
    return fromJsonlFile(file, { onDiagnostic }).pipe(
      concatMap((event) => {
        const at = elapsedOf(event);
        const gap = at === undefined ? UNTIMED_GAP_MS : Math.max(0, at - previous);
        if (at !== undefined) previous = at;
        return of(event).pipe(delay(gap / speed));
      }),
    );
  });
}
