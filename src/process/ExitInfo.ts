/** How a run's process ended, passed to `RunOptions.onExit` on every ending. */
export interface ExitInfo {
  /** The process id, `undefined` when it never started. */
  readonly pid: number | undefined;
  /** The exit status, `undefined` when killed by a signal or never started. */
  readonly exitCode: number | undefined;
  /** The signal that killed the process, if one did. */
  readonly signal: string | undefined;
  /** Milliseconds from spawn to exit. */
  readonly durationMs: number;
  /** The thread id from the resume hint on stderr: what `resume` takes next time. */
  readonly threadId: string | undefined;
  /** Whether a `done` event was seen. */
  readonly done: boolean;
}
