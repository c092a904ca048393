import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';

/** Bytes a link holds before it stops reading its source: a stand-in for the sender's TCP window. */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;

/**
 * One direction of a proxied connection: each chunk read from `from` is
 * written to `to` `delayMs` after it was read, in the order read, and not at
 * all while the link is stalled. A timer per head of line, since a fixed
 * one-way delay is what a kernel without netem cannot add. Backpressure both
 * ways: `from` is paused while `to` refuses more or too many bytes wait.
 */
export class ProxyLink {
  private readonly queue: { readonly chunk: Buffer; readonly due: number }[] = [];
  private queuedBytes = 0;
  private blocked = false;
  private ended = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly from: Socket,
    private readonly to: Socket,
    private readonly delayMs: number,
    private readonly stalled: () => boolean,
  ) {
    from.on('data', (chunk: Buffer) => this.read(chunk));
    from.on('end', () => {
      this.ended = true;
      this.flush();
    });
    to.on('drain', () => {
      this.blocked = false;
      this.flush();
    });
  }

  /** Moves what is due: called as the link resumes, and by its own timer. */
  flush(): void {
    if (this.stalled() || this.blocked || this.to.destroyed) return;
    const now = performance.now();
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.due > now) return this.wake(head.due - now);
      this.queue.shift();
      this.queuedBytes -= head.chunk.length;
      if (!this.to.write(head.chunk)) {
        this.blocked = true;
        break;
      }
    }
    if (this.queuedBytes < HIGH_WATER_BYTES && !this.blocked && this.from.isPaused()) this.from.resume();
    if (this.ended && this.queue.length === 0) this.to.end();
  }

  /** Stops the timer, for a connection that closed. */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private read(chunk: Buffer): void {
    this.queue.push({ chunk, due: performance.now() + this.delayMs });
    this.queuedBytes += chunk.length;
    // Stalled, or too much in flight: the source waits, as a full TCP window makes it.
    if (this.stalled() || this.queuedBytes >= HIGH_WATER_BYTES) this.from.pause();
    if (this.queue.length === 1) this.flush();
  }

  private wake(inMs: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.flush();
      },
      Math.max(1, Math.ceil(inMs)),
    );
  }
}
