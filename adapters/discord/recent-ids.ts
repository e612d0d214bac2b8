/** A bounded set of recently seen ids: every bot in a channel receives the same message, forward it once. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 5000) {}

  /** Records `id`; returns false when it was already there. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    return true;
  }
}
