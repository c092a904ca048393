import type { Observable, Subscription } from 'rxjs';
import { FlowControl } from '../common/FlowControl.js';

/** What a byte stream is read from: an Observable, or a function of the tap that can pause it. */
export type FlowSource<T> = Observable<T> | ((flow: FlowControl) => Observable<T>);

/** How an Observable's values become the text of a byte stream, and what it says at its end. */
export interface ByteFraming<T> {
  /** The text of one value, given its index from 0; `undefined` sends nothing for it. */
  frame(value: T, index: number): string | undefined;
  /** The last words after completion; `undefined` for none. */
  complete(): string | undefined;
  /** The last words after an error; without it, the stream errors. */
  error?(err: unknown): string;
  /** Text sent every `everyMs` while the stream is idle, to keep proxies from closing it. */
  readonly heartbeat?: { readonly everyMs: number; readonly text: string };
}

/** Bytes held for a slow reader before the source is paused. */
export const HIGH_WATER_BYTES = 64 * 1024;

const encoder = new TextEncoder();

type Ending = { readonly error: unknown } | 'complete';

/**
 * The underlying source of a web `ReadableStream` of bytes, read from an
 * Observable: subscribed when the stream starts, unsubscribed when it is
 * cancelled. Chunks wait here until the reader pulls them, so that an error
 * reaches the reader after every chunk before it; more than 64 KiB waiting
 * pauses the source through its `FlowControl`, and it resumes at half that.
 */
export class ObservableByteSource<T> {
  private readonly flow = new FlowControl();
  private readonly source$: Observable<T>;
  private readonly waiting: Uint8Array[] = [];
  private waitingBytes = 0;
  private ending: Ending | undefined;
  private wake: (() => void) | undefined;
  private subscription: Subscription | undefined;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  private index = 0;
  private quiet = true;

  constructor(
    source: FlowSource<T>,
    private readonly framing: ByteFraming<T>,
  ) {
    this.source$ = typeof source === 'function' ? source(this.flow) : source;
  }

  start(): void {
    this.startHeartbeat();
    this.subscription = this.source$.subscribe({
      next: (value) => this.hold(this.framing.frame(value, this.index++)),
      complete: () => this.end('complete'),
      error: (error: unknown) => this.end({ error }),
    });
  }

  /** Hands the reader the next chunk, or the end, waiting for one if need be. */
  async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (this.waiting.length === 0 && this.ending === undefined) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    const chunk = this.waiting.shift();
    if (chunk) {
      this.waitingBytes -= chunk.byteLength;
      if (this.waitingBytes <= HIGH_WATER_BYTES / 2) this.flow.resume();
      return controller.enqueue(chunk);
    }
    if (this.ending === 'complete') controller.close();
    else controller.error(this.ending?.error);
  }

  cancel(): void {
    this.stopHeartbeat();
    this.subscription?.unsubscribe();
    this.flow.resume();
    this.waiting.length = 0;
  }

  private hold(text: string | undefined): void {
    if (text === undefined) return;
    const chunk = encoder.encode(text);
    this.waiting.push(chunk);
    this.waitingBytes += chunk.byteLength;
    this.quiet = false;
    if (this.waitingBytes >= HIGH_WATER_BYTES) this.flow.pause();
    this.wake?.();
  }

  private end(how: Ending): void {
    this.stopHeartbeat();
    if (how === 'complete') this.hold(this.framing.complete());
    else if (this.framing.error) this.hold(this.framing.error(how.error));
    this.ending = how === 'complete' || this.framing.error ? 'complete' : how;
    this.wake?.();
  }

  private startHeartbeat(): void {
    const { heartbeat } = this.framing;
    if (!heartbeat || heartbeat.everyMs === Infinity) return;
    this.heartbeat = setInterval(() => {
      // Only a stream that has said nothing for a whole period, and whose reader keeps up, needs one.
      if (this.quiet && this.waiting.length === 0) this.hold(heartbeat.text);
      this.quiet = true;
    }, heartbeat.everyMs);
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
  }
}
