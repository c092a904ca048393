import type { FlowControl } from '../../common/FlowControl.js';

/**
 * A writer's hand on its source's tap: pauses the `FlowControl` (the CLI's
 * stdout, for a worker's run) once more than `highWaterBytes` of events await
 * storage, and resumes it below half of that, so that a slow broker slows
 * the CLI down instead of filling memory. The gap between the two keeps it
 * from flapping on every ack.
 */
export class Backpressure {
  private pausing = false;

  constructor(
    private readonly flow: FlowControl | undefined,
    private readonly highWaterBytes: number,
  ) {}

  /** Whether this writer holds the source paused now. */
  get paused(): boolean {
    return this.pausing;
  }

  /** Called as the bytes awaiting storage change. */
  update(heldBytes: number): void {
    if (!this.flow) return;
    if (!this.pausing && heldBytes > this.highWaterBytes) {
      this.pausing = true;
      this.flow.pause();
    } else if (this.pausing && heldBytes < this.highWaterBytes / 2) this.release();
  }

  /** Lets go: the writer is done, and a source left paused could not finish (a CLI blocked on its stdout). */
  release(): void {
    if (!this.pausing) return;
    this.pausing = false;
    this.flow?.resume();
  }
}
