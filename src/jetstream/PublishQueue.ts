/** How one event's payload is stored: resolves once the stream has it. */
export type StoreEvent = (sequence: number, data: Uint8Array) => Promise<unknown>;

/**
 * The events of one attempt on their way to the stream, in order: at most
 * `maxPendingAcks` await their ack, the rest wait behind them, and the bytes
 * of both together stay within `maxBufferBytes` (a run's output cannot be
 * paused, so past that the caller fails the run). Nothing is sent before
 * `open()`: the attempt's `started` record goes first.
 */
export class PublishQueue {
  /** Payloads not yet sent, in order, from `head`. */
  private waiting: (Uint8Array | undefined)[] = [];
  private head = 0;
  /** The sequence of `waiting[head]`. */
  private nextSequence = 1;
  private inFlight = 0;
  /** Every event up to this one is stored; `storedAbove` holds those stored past a gap. */
  private storedThrough = 0;
  private readonly storedAbove = new Set<number>();
  private bytes = 0;
  private opened = false;
  private closed = false;

  constructor(
    private readonly store: StoreEvent,
    private readonly limits: { readonly maxPendingAcks: number; readonly maxBufferBytes: number },
    /** After each ack; `fail` after the first publish that could not be stored. */
    private readonly onStored: () => void,
    private readonly fail: (err: unknown) => void,
  ) {}

  /** How many events are stored with no gap before them. */
  get stored(): number {
    return this.storedThrough;
  }

  /** Whether every event pushed is stored. */
  get drained(): boolean {
    return this.opened && this.inFlight === 0 && this.head === this.waiting.length;
  }

  /** Queues one payload; `false` when the bytes held would pass `maxBufferBytes`. */
  push(data: Uint8Array): boolean {
    this.bytes += data.length;
    if (this.bytes > this.limits.maxBufferBytes) return false;
    this.waiting.push(data);
    this.pump();
    return true;
  }

  /** Starts sending. */
  open(): void {
    this.opened = true;
    this.pump();
  }

  /** Sends nothing more; acks still in flight are ignored. */
  close(): void {
    this.closed = true;
  }

  private pump(): void {
    while (
      !this.closed &&
      this.opened &&
      this.inFlight < this.limits.maxPendingAcks &&
      this.head < this.waiting.length
    ) {
      const data = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined;
      const sequence = this.nextSequence++;
      this.inFlight++;
      this.store(sequence, data).then(() => this.acked(sequence, data), this.fail);
    }
    // Reclaim the sent prefix now and then; what waits is bounded by maxBufferBytes.
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
  }

  private acked(sequence: number, data: Uint8Array): void {
    this.inFlight--;
    this.storedAbove.add(sequence);
    while (this.storedAbove.delete(this.storedThrough + 1)) this.storedThrough++;
    this.bytes -= data.length;
    if (this.closed) return;
    this.pump();
    this.onStored();
  }
}
