/**
 * Remembers recent keys, forgetting the oldest beyond `capacity`. The adapter uses it to
 * forward each Slack message once although every agent app in the channel receives it
 * (and Slack re-delivers on slow acks); the bridge's store still deduplicates, so
 * forgetting an old key costs a little work, never a double answer.
 */
export class SeenSet {
  private readonly keys = new Set<string>();
  constructor(private readonly capacity = 10_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Adds `key`; false when it was already there. */
  add(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      const oldest = this.keys.values().next().value;
      if (oldest !== undefined) this.keys.delete(oldest);
    }
    return true;
  }
}
