import type { ListenOptions, RunChange, RunListener } from './runChange.js';

interface Entry {
  readonly listener: RunListener;
  readonly deltas: boolean;
}

/**
 * The listeners of one `RunModel`, in the order they came. Each change
 * reaches every listener that hears its kind, even after one of them throws:
 * the first error is thrown once all have heard it, or, while `holding`,
 * kept until `release`, so that the run's end reaches them all.
 */
export class ChangeListeners {
  private entries: readonly Entry[] = [];
  /** Whether any listener hears the changes most events make. */
  deltas = false;
  /** Whether anyone listens at all: without, the model makes no change records. */
  any = false;
  /** The only listener, and the only one that hears deltas, when there is one: told directly, with nothing to hold. */
  private sole: RunListener | undefined;
  private soleDeltaListener: RunListener | undefined;
  private held: { readonly error: unknown } | undefined;
  private holding = false;

  /** Adds a listener; returns what removes it. */
  add(listener: RunListener, options: ListenOptions = {}): () => void {
    const entry: Entry = { listener, deltas: options.deltas ?? false };
    this.entries = [...this.entries, entry];
    this.update();
    return () => {
      this.entries = this.entries.filter((e) => e !== entry);
      this.update();
    };
  }

  /** Tells every listener a change. */
  tell(change: RunChange): void {
    if (this.sole !== undefined && !this.holding) return this.sole(change);
    for (const entry of this.entries) this.call(entry, change);
    this.rethrow();
  }

  /** Tells the listeners that hear them one of the changes most events make. */
  tellDelta(change: RunChange): void {
    if (this.soleDeltaListener !== undefined && !this.holding) return this.soleDeltaListener(change);
    for (const entry of this.entries) if (entry.deltas) this.call(entry, change);
    this.rethrow();
  }

  /** Runs `tellAll` with errors kept, then throws the first. */
  holdErrors(tellAll: () => void): void {
    this.holding = true;
    try {
      tellAll();
    } finally {
      this.holding = false;
    }
    this.rethrow();
  }

  private call(entry: Entry, change: RunChange): void {
    try {
      entry.listener(change);
    } catch (error) {
      this.held ??= { error };
    }
  }

  private rethrow(): void {
    if (this.holding || this.held === undefined) return;
    const { error } = this.held;
    this.held = undefined;
    throw error;
  }

  private update(): void {
    this.any = this.entries.length > 0;
    this.sole = this.entries.length === 1 ? this.entries[0]!.listener : undefined;
    const hearing = this.entries.filter((e) => e.deltas);
    this.deltas = hearing.length > 0;
    this.soleDeltaListener = hearing.length === 1 ? hearing[0]!.listener : undefined;
  }
}
