// The readers of a run that has ended come over seconds, not at once: every
// tab of a dashboard, every teammate sent the link, every reconnect. A
// shared reading let go with its last reader made each who came after read
// the run again (the file, or a consumer on the broker), so a finished run's
// reading is kept a little while, within a bound in bytes for the whole hub.

/** How long a finished run's reading is kept after its last reader left. */
export const KEEP_READING_MS = 30_000;

/** A reading kept: its size, how to let it go, and the timer that will. */
interface Kept {
  readonly bytes: number;
  readonly drop: () => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * The finished readings a hub keeps for readers who come soon after the
 * last one left: each for `keepMs`, at most `maxBytes` of JSONL in all, the
 * oldest let go first when a newer one needs room. A reader who comes takes
 * its run's reading out (`take`); it is kept again when its readers leave.
 */
export class KeptReadings {
  /** The kept readings, oldest first. */
  private readonly kept = new Map<object, Kept>();
  private bytes = 0;

  constructor(
    /** The most bytes of JSONL kept in all; a reading larger than this is let go at once. */
    private readonly maxBytes: number,
    /** How long a reading is kept after its last reader left; 0 keeps none. */
    private readonly keepMs = KEEP_READING_MS,
  ) {}

  /** The bytes of JSONL of the readings kept now. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Keeps `reading`, of `bytes`, until `keepMs` pass or a newer one needs its room; then calls `drop`. */
  keep(reading: object, bytes: number, drop: () => void): void {
    this.take(reading);
    if (this.keepMs <= 0 || bytes > this.maxBytes) return drop();
    while (this.bytes + bytes > this.maxBytes) this.dropOldest();
    const timer = setTimeout(() => this.release(reading), this.keepMs);
    // A kept reading is a cache: it never keeps a process alive.
    timer.unref();
    this.kept.set(reading, { bytes, drop, timer });
    this.bytes += bytes;
  }

  /** Takes `reading` out, a reader having come to it; whether it was kept. */
  take(reading: object): boolean {
    const kept = this.kept.get(reading);
    if (kept === undefined) return false;
    clearTimeout(kept.timer);
    this.kept.delete(reading);
    this.bytes -= kept.bytes;
    return true;
  }

  /** Lets every kept reading go. */
  clear(): void {
    for (const reading of [...this.kept.keys()]) this.release(reading);
  }

  private dropOldest(): void {
    const oldest = this.kept.keys().next();
    if (!oldest.done) this.release(oldest.value);
  }

  private release(reading: object): void {
    const kept = this.kept.get(reading);
    if (kept !== undefined && this.take(reading)) kept.drop();
  }
}
