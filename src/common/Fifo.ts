/** Taken items a `Fifo` keeps in its array at most before it drops them: a copy now and then, not at each shift. */
const COMPACT_AFTER = 1024;

/**
 * A first-in first-out queue on one array: `shift` moves a head index rather
 * than the array's items, and the taken prefix is dropped once it is over
 * half the array (and over 1,024 items), so memory follows what is held.
 */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  /** Items held. */
  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, left in the queue. */
  peek(): T | undefined {
    return this.items[this.head];
  }

  /** The oldest item, taken out. */
  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > COMPACT_AFTER && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** The items held, oldest first, as a new array. */
  toArray(): T[] {
    return this.items.slice(this.head) as T[];
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
