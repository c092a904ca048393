import type { ListenOptions, RunChange, RunListener } from './runChange.js';

interface Entry {
  readonly listener: RunListener;
  readonly deltas: boolean;
  /** Removed while a change was being told: it hears no more. */
  removed: boolean;
}

/**
 * The listeners of one `RunModel`, in the order they came. Each change
 * reaches every listener that hears its kind, even after one of them throws:
 * the first error is held, for the model to throw once it has taken the
 * whole event (`throwHeld`), so that a listener's error never leaves the
 * model half-way through an event.
 */
export class ChangeListeners {
  private entries: readonly Entry[] = [];
  /** Whether any listener hears the changes most events make. */
  deltas = false;
  /** Whether anyone listens at all: without, the model makes no change records. */
  any = false;
  /** Whether an error is held. */
  failed = false;
  /** The only listener, when there is one: told without a loop, the path of a run with one watcher. */
  private sole: RunListener | undefined;
  private held: unknown;

  /** Adds a listener; returns what removes it. */
  add(listener: RunListener, options: ListenOptions = {}): () => void {
    const entry: Entry = { listener, deltas: options.deltas ?? false, removed: false };
    this.entries = [...this.entries, entry];
    this.update();
    return () => {
      entry.removed = true;
      this.entries = this.entries.filter((e) => e !== entry);
      this.update();
    };
  }

  /** Tells every listener a change. */
  tell(change: RunChange): void {
    if (this.sole !== undefined) return this.call(this.sole, change);
    for (const entry of this.entries) if (!entry.removed) this.call(entry.listener, change);
  }

  /** Tells the listeners that hear them one of the changes most events make. */
  tellDelta(change: RunChange): void {
    for (const entry of this.entries) if (entry.deltas && !entry.removed) this.call(entry.listener, change);
  }

  /** Throws the first error a listener threw since the last call, if any. */
  throwHeld(): void {
    if (!this.failed) return;
    const error = this.held;
    this.failed = false;
    this.held = undefined;
    throw error;
  }

  private call(listener: RunListener, change: RunChange): void {
    try {
      listener(change);
    } catch (error) {
      if (this.failed) return;
      this.failed = true;
      this.held = error;
    }
  }

  private update(): void {
    this.any = this.entries.length > 0;
    this.sole = this.entries.length === 1 ? this.entries[0]!.listener : undefined;
    this.deltas = this.entries.some((e) => e.deltas);
  }
}
