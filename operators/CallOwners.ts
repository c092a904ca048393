import type { Delegation } from './delegations.js';

const NONE: readonly string[] = [];

/**
 * Which delegation each open sub-agent invocation runs in: where a change
 * that closes it (its sub-agent's end, or the run's) says it ran, and which
 * calls a sub-agent leaves open when it ends. Open calls are few at any
 * moment, so a sub-agent's end looks through them all.
 */
export class CallOwners {
  private readonly ownerOf = new Map<string, Delegation>();

  /** The invocation of `key` is open in `owner`. */
  opened(key: string, owner: Delegation): void {
    this.ownerOf.set(key, owner);
  }

  /** The invocation of `key` closed. */
  closed(key: string): void {
    this.ownerOf.delete(key);
  }

  of(key: string): Delegation | undefined {
    return this.ownerOf.get(key);
  }

  /** Forgets a delegation that ended; gives the keys of its invocations still open. */
  ended(owner: Delegation): readonly string[] {
    if (this.ownerOf.size === 0) return NONE;
    const keys: string[] = [];
    for (const [key, of] of this.ownerOf) if (of === owner) keys.push(key);
    for (const key of keys) this.ownerOf.delete(key);
    return keys;
  }
}
