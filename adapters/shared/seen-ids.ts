/**
 * A bounded set of recently seen keys, oldest forgotten first. Every agent bot in a room receives the same
 * message (and platforms re-deliver on slow acks): an adapter forwards each once. The bridge's store still
 * deduplicates, so forgetting an old key costs a little work, never a double answer.
 */
export class SeenIds {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Records `key`; false when it was already there. */
  add(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
    return true;
  }

  /** Forgets `key`: its next delivery is new again (the message was not kept, and the platform sends it again). */
  delete(key: string): void {
    this.keys.delete(key);
  }
}
