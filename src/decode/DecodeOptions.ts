import type { DecodeIssue } from './DecodeIssue.js';

/** How lines become events; shared by `fromJsonl` and `run`. */
export interface DecodeOptions {
  /** Called for each line that does not decode; the stream goes on. */
  readonly onDiagnostic?: (issue: DecodeIssue) => void;
  /** Make a bad line an error of the Observable (a `DecodeError`) instead of a diagnostic. */
  readonly strict?: boolean;
  /** Pass events of a `type` this library does not know as `UnknownEvent` instead of skipping them. */
  readonly keepUnknown?: boolean;
  /**
   * Longest line accepted, in UTF-8 bytes (default 64 MiB). A longer line is
   * reported and dropped, and no more than this is held while reading it.
   */
  readonly maxLineBytes?: number;
}
