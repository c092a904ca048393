/** The terminal size a frame must fit. */
export interface FrameSize {
  readonly columns: number;
  readonly rows: number;
}
