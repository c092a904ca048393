/** What every error of a run carries, whatever ended it. */
export interface EvoSciErrorDetails {
  readonly exitCode?: number | undefined;
  readonly signal?: string | undefined;
  /** The last lines the process wrote to stderr, ANSI codes stripped. */
  readonly stderrTail?: string;
  /** The thread id from the producer's resume hint, for `RunOptions.resume`. */
  readonly threadId?: string | undefined;
  readonly cause?: unknown;
}
