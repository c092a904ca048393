/**
 * Calls of the same key made while one is under way share its answer: a
 * thousand readers that open one run at once cost one lookup, not a
 * thousand. A call made once the answer came makes a new one.
 */
export class InFlight<T> {
  private readonly calls = new Map<string, Promise<T>>();

  /** The answer of the call of `key` under way, else of `call()`, made now. */
  get(key: string, call: () => Promise<T>): Promise<T> {
    const running = this.calls.get(key);
    if (running) return running;
    const made = call().finally(() => this.calls.delete(key));
    this.calls.set(key, made);
    return made;
  }
}
