import type { ForgottenRun } from './RunStore.js';

/**
 * How many forgotten runs a hub remembers, the latest ones. Each is at most
 * 128 bytes of id, 255 of key and 43 of fingerprint (`isHubMade`): at most
 * 4.3 MB of text, whatever the runs were.
 */
export const REMEMBERED_FORGOTTEN = 10_000;

/** The latest forgotten runs of a hub, by id (a reader hears 410) and by key (a retry starts nothing). */
export class ForgottenRuns {
  /** Oldest first. */
  private readonly byId = new Map<string, ForgottenRun>();
  private readonly byKey = new Map<string, ForgottenRun>();

  constructor(private readonly capacity = REMEMBERED_FORGOTTEN) {}

  add(run: ForgottenRun): void {
    this.byId.delete(run.id);
    this.byId.set(run.id, run);
    if (run.idempotencyKey !== undefined) this.byKey.set(run.idempotencyKey, run);
    if (this.byId.size > this.capacity) this.drop(this.byId.values().next().value!);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** The forgotten run `key` started, if it is remembered. */
  withKey(key: string): ForgottenRun | undefined {
    return this.byKey.get(key);
  }

  private drop(oldest: ForgottenRun): void {
    this.byId.delete(oldest.id);
    const key = oldest.idempotencyKey;
    if (key !== undefined && this.byKey.get(key) === oldest) this.byKey.delete(key);
  }
}
