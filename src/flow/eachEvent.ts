import type { Observable, Subscription } from 'rxjs';
import { FlowControl } from '../common/FlowControl.js';
import { wholeAtLeast } from '../common/checks.js';
import { Fifo } from '../common/Fifo.js';

/** Options of `eachEvent`. */
export interface EachEventOptions {
  /**
   * Events held for a consumer that is behind before the source is paused
   * (default 64). Memory is this many events plus what the source had already
   * read when it paused (one read: 64 KiB of a CLI's output, a file's block).
   * A source that cannot be paused is not bounded by it.
   */
  readonly highWaterMark?: number;
}

const DEFAULT_HIGH_WATER_MARK = 64;

/** The events an iterator holds for its consumer, and the source's tap. */
class EventQueue<T> {
  private readonly held = new Fifo<T>();
  private ended: { error: unknown } | 'complete' | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly highWaterMark: number,
    private readonly flow: FlowControl,
  ) {}

  push(value: T): void {
    this.held.push(value);
    if (this.held.length >= this.highWaterMark) this.flow.pause();
    this.wake?.();
  }

  end(how: { error: unknown } | 'complete'): void {
    this.ended = how;
    this.wake?.();
  }

  /** Forgets what is held: the consumer has left. */
  clear(): void {
    this.held.clear();
  }

  /** The next event, or `done` at the end; rejects with the source's error after its last event. */
  async next(): Promise<IteratorResult<T, undefined>> {
    while (this.held.length === 0 && this.ended === undefined) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
    if (this.held.length > 0) return { done: false, value: this.take() };
    if (this.ended !== 'complete' && this.ended !== undefined) throw this.ended.error;
    return { done: true, value: undefined };
  }

  private take(): T {
    const value = this.held.shift() as T;
    if (this.held.length <= this.highWaterMark / 2) this.flow.resume();
    return value;
  }
}

/** One `for await` over an Observable: subscribed on the first `next()`, unsubscribed on `return()`. */
class ObservableIterator<T> implements AsyncIterableIterator<T> {
  private subscription: Subscription | undefined;

  constructor(
    private readonly source$: Observable<T>,
    private readonly queue: EventQueue<T>,
    private readonly flow: FlowControl,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    this.subscription ??= this.source$.subscribe({
      next: (value) => this.queue.push(value),
      error: (error: unknown) => this.queue.end({ error }),
      complete: () => this.queue.end('complete'),
    });
    return this.queue.next();
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.stop();
    return Promise.resolve({ done: true, value: undefined });
  }

  throw(error: unknown): Promise<IteratorResult<T, undefined>> {
    this.stop();
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }

  private stop(): void {
    this.subscription?.unsubscribe();
    this.queue.end('complete');
    this.queue.clear();
    this.flow.resume();
  }
}

/**
 * An Observable as an `AsyncIterableIterator`, for `for await`. It subscribes
 * on the first `next()`; leaving the loop (`break`, `return`, a throw)
 * unsubscribes, which stops a run's process. The source's error is thrown by
 * the loop after its last event.
 *
 * Given as a function of a `FlowControl`, the source can be paused: a
 * consumer that falls `highWaterMark` events behind pauses it, and it goes
 * on once the consumer has caught up half of that. For `run()`, the CLI's
 * stdout is then not read: its pipe fills and the CLI waits.
 *
 * ```ts
 * for await (const event of eachEvent((flow) => run({ prompt: 'Survey sparse attention', flow }))) {
 *   await saveToDatabase(event);
 * }
 * ```
 */
export function eachEvent<T>(
  source: Observable<T> | ((flow: FlowControl) => Observable<T>),
  options: EachEventOptions = {},
): AsyncIterableIterator<T> {
  const highWaterMark = options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK;
  wholeAtLeast('eachEvent', 'highWaterMark', highWaterMark, 1);
  const flow = new FlowControl();
  const source$ = typeof source === 'function' ? source(flow) : source;
  return new ObservableIterator(source$, new EventQueue(highWaterMark, flow), flow);
}
