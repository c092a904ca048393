/** A set of the latest `capacity` values added: the oldest is let go (and told to `onEvict`) when one more comes. */
export class RecentSet<T> {
  private readonly values = new Set<T>();

  constructor(
    private readonly capacity: number,
    private readonly onEvict: (value: T) => void = () => undefined,
  ) {}

  add(value: T): void {
    this.values.delete(value);
    this.values.add(value);
    if (this.values.size <= this.capacity) return;
    const oldest = this.values.values().next().value as T;
    this.values.delete(oldest);
    this.onEvict(oldest);
  }

  has(value: T): boolean {
    return this.values.has(value);
  }
}
