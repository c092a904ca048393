// A run store a test stands between a hub and its home with: it holds the
// hub's status writes until the test lets them go, or drops them from a
// point on, as a process that died would have left them unwritten.
import type { RunStore, StoredRun } from '../../src/runs/RunStore.js';

/** A store whose `save`s wait, while `holding`, until the test lets them go; and, once `dead`, are never written. */
export class HoldingStore implements RunStore {
  holding = false;
  /** Writes nothing more (its events file aside, which a run's sink writes as it goes). */
  dead = false;
  private readonly held: (() => void)[] = [];

  constructor(private readonly inner: RunStore) {}

  get durable(): boolean {
    return this.inner.durable;
  }

  async save(run: StoredRun): Promise<void> {
    if (this.holding) await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.dead) return;
    return this.inner.save(run);
  }

  /** Lets every held save go on, and holds no more. */
  release(): void {
    this.holding = false;
    for (const resolve of this.held.splice(0)) resolve();
  }

  open = () => this.inner.open();
  events = (id: string) => this.inner.events(id);
  read: RunStore['read'] = (...args) => this.inner.read(...args);
  bytes = (id: string) => this.inner.bytes(id);
  forget: RunStore['forget'] = (...args) => this.inner.forget(...args);
}
