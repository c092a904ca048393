/** Options of `liveView`. */
export interface LiveViewOptions {
  /** Where to draw; default `process.stdout`. */
  readonly output?: NodeJS.WriteStream;
  /** Redraw in place with spinners; default: whether `output` is a TTY. Otherwise one line per finished step. */
  readonly interactive?: boolean;
}
