import { stripControls } from '../common/terminalText.js';
import type { DecodeIssue } from '../events/errors.js';

/** The lines of a run that were not events, counted so that an error can say so even without an `onDiagnostic`. */
export class BadLines {
  private count = 0;
  private first: DecodeIssue | undefined;

  constructor(private readonly onDiagnostic: ((issue: DecodeIssue) => void) | undefined) {}

  /** Counts `issue` and passes it to the app's `onDiagnostic`. */
  readonly report = (issue: DecodeIssue): void => {
    // A note on an event that was kept (an integer JSON.parse rounded) is not a line that was lost.
    if (!issue.kept) {
      this.count++;
      this.first ??= issue;
    }
    this.onDiagnostic?.(issue);
  };

  /** `; 12 lines were not events, the first (line 1): "Loading…"`, or nothing. */
  get note(): string {
    if (this.first === undefined) return '';
    const lines = this.count === 1 ? 'line was' : 'lines were';
    const raw = JSON.stringify(stripControls(this.first.raw).slice(0, 120));
    return `; ${this.count} ${lines} not events, the first (line ${this.first.line}): ${raw}`;
  }
}
