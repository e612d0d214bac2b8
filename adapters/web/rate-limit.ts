/**
 * A token bucket per key (an address, a person): `capacity` at once, then one more every `refillMs`. Keys that are
 * full again are forgotten, so the map holds only those that spent something lately.
 */
export class RateLimit {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly capacity: number,
    private readonly refillMs: number,
  ) {}

  /** Takes one token for `key`; false when none is left (the request is refused). */
  take(key: string, now: number): boolean {
    this.prune(now);
    const bucket = this.buckets.get(key) ?? { tokens: this.capacity, at: now };
    const tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.at) / this.refillMs);
    if (tokens < 1) {
      this.buckets.set(key, { tokens, at: now });
      return false;
    }
    this.buckets.set(key, { tokens: tokens - 1, at: now });
    return true;
  }

  private prune(now: number): void {
    if (this.buckets.size < 1000) return;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) / this.refillMs >= this.capacity) this.buckets.delete(key);
    }
  }
}
