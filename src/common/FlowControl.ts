/**
 * A consumer's hand on a source's tap. A consumer that falls behind pauses
 * it; a source that can wait (the CLI's stdout, a file, a web stream) stops
 * reading until it is resumed. Sources that cannot wait go on: the consumer's
 * buffer is then what bounds them.
 *
 * ```ts
 * const flow = new FlowControl();
 * const events = eachEvent(run({ prompt, flow }), { flow });
 * ```
 */
export class FlowControl {
  private pausedNow = false;
  private readonly listeners = new Set<(paused: boolean) => void>();

  /** Whether the consumer has asked the source to wait. */
  get paused(): boolean {
    return this.pausedNow;
  }

  /** Asks the source to stop producing until `resume()`. */
  pause(): void {
    this.set(true);
  }

  /** Lets the source produce again. */
  resume(): void {
    this.set(false);
  }

  /** Resolves at once when not paused, else when resumed. */
  resumed(): Promise<void> {
    if (!this.pausedNow) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.watch((paused) => {
        if (paused) return;
        stop();
        resolve();
      });
    });
  }

  /** Calls `listener` on each change, and at once if paused; returns the function that stops listening. */
  watch(listener: (paused: boolean) => void): () => void {
    this.listeners.add(listener);
    if (this.pausedNow) listener(true);
    return () => this.listeners.delete(listener);
  }

  private set(paused: boolean): void {
    if (paused === this.pausedNow) return;
    this.pausedNow = paused;
    for (const listener of [...this.listeners]) listener(paused);
  }
}
