// A reader's frames on their way to its response: written together, at the
// end of the turn that made them, in writes of up to 16 KiB, rather than one
// write of a few hundred bytes per frame. A thousand readers of a run cost a
// thousand writes per 16 KiB of it, not one per event each.
import type { ServerResponse } from 'node:http';
import type { FlowControl } from '../../common/FlowControl.js';
import { HIGH_WATER_BYTES } from '../../flow/ObservableByteSource.js';

/** How sending a body ended: `undefined` when it was sent whole or the client went away; else the stream's error. */
export type SendFailure = { readonly error: unknown } | undefined;

/** The most text one `res.write` takes: what the socket takes at once before it says to wait. */
export const WRITE_BYTES = 16 * 1024;

/** How the queue ends once what it holds is written: the response ended, or left open with the error that ended it. */
type Ending = 'end' | { readonly error: unknown };

/**
 * The frames waiting for one response. Frames queued in one turn leave
 * together at its end (a microtask), joined into writes of up to
 * `WRITE_BYTES`; while the response says to wait, they wait for 'drain'.
 * More than 64 KiB waiting pauses the source through its `FlowControl`, and
 * it resumes at half that. A write that throws ends this response only:
 * `done` resolves with its error, and the source is left for the caller to
 * unsubscribe.
 */
export class FrameQueue {
  /** Resolves once every frame is written and the response ended (or left open, with `{ error }`), or it closed. */
  readonly done: Promise<SendFailure>;
  private readonly pending: string[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  private draining = false;
  private settled = false;
  private ending: Ending | undefined;
  private settle!: (failure: SendFailure) => void;

  constructor(
    private readonly res: ServerResponse,
    private readonly flow: FlowControl,
  ) {
    this.done = new Promise<SendFailure>((resolve) => (this.settle = resolve));
    if (res.destroyed) this.close(undefined);
    else res.once('close', () => this.close(undefined));
  }

  /** Whether nothing waits to be written: the reader has all it was sent. */
  get idle(): boolean {
    return this.pending.length === 0 && !this.draining;
  }

  /** One more frame, written at the end of this turn with the others; none once the queue is ending. */
  push(text: string): void {
    if (this.settled || this.ending !== undefined) return;
    this.pending.push(text);
    this.pendingBytes += text.length;
    if (this.pendingBytes >= HIGH_WATER_BYTES) this.flow.pause();
    this.schedule();
  }

  /** No more frames: once those waiting are written, ends the response, or settles with the error. */
  finish(ending: Ending): void {
    if (this.ending !== undefined) return;
    this.ending = ending;
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.draining || this.settled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.pending.length > 0 && !this.draining && !this.settled) {
      const chunk = this.take();
      let room: boolean;
      try {
        room = this.res.write(chunk);
      } catch (error) {
        return this.close({ error });
      }
      if (!room) this.waitForDrain();
    }
    if (this.settled) return;
    if (this.pendingBytes <= HIGH_WATER_BYTES / 2) this.flow.resume();
    if (this.idle && this.ending !== undefined) this.end(this.ending);
  }

  /** The next frames, joined, up to `WRITE_BYTES` (one frame alone may be longer). */
  private take(): string {
    let count = 1;
    let bytes = this.pending[0]!.length;
    while (count < this.pending.length && bytes + this.pending[count]!.length <= WRITE_BYTES)
      bytes += this.pending[count++]!.length;
    const taken = this.pending.splice(0, count);
    this.pendingBytes -= bytes;
    return count === 1 ? taken[0]! : taken.join('');
  }

  private waitForDrain(): void {
    this.draining = true;
    this.res.once('drain', () => {
      this.draining = false;
      this.flush();
    });
  }

  private end(ending: Ending): void {
    if (ending !== 'end') return this.close(ending);
    try {
      this.res.end();
    } catch (error) {
      return this.close({ error });
    }
    this.close(undefined);
  }

  /**
   * Settles, dropping what waits. A paused source stays paused: resumed, it
   * would hand over the rest of its run at once (a log reader stops only when
   * paused), making frames no one will read; the caller unsubscribes it.
   */
  private close(failure: SendFailure): void {
    if (this.settled) return;
    this.settled = true;
    this.pending.length = 0;
    this.pendingBytes = 0;
    this.settle(failure);
  }
}
