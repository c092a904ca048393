import type { Clock, Timer } from '../../src/process/clock.js';

interface Pending {
  readonly at: number;
  readonly order: number;
  readonly action: () => void;
}

/**
 * A clock that moves only when a test moves it: a run's real process is
 * started, the test waits for a sign of the state it needs (an event, a
 * stderr line), then fires the run's timers by advancing the clock.
 */
export class ManualClock implements Clock {
  private time = 0;
  private order = 0;
  private readonly pending = new Set<Pending>();

  now(): number {
    return this.time;
  }

  schedule(ms: number, action: () => void): Timer {
    if (ms === Infinity) return { clear: () => undefined };
    const entry = { at: this.time + ms, order: this.order++, action };
    this.pending.add(entry);
    return { clear: () => this.pending.delete(entry) };
  }

  /** Moves the clock `ms` on, running each timer that falls due, in order, as it falls due. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (let next = this.due(until); next; next = this.due(until)) {
      this.pending.delete(next);
      this.time = next.at;
      next.action();
    }
    this.time = until;
  }

  /** How many timers are waiting. */
  get waiting(): number {
    return this.pending.size;
  }

  private due(until: number): Pending | undefined {
    let first: Pending | undefined;
    for (const entry of this.pending) {
      if (entry.at > until) continue;
      if (!first || entry.at < first.at || (entry.at === first.at && entry.order < first.order)) first = entry;
    }
    return first;
  }
}
