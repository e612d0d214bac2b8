/**
 * Slack's limits on reading history for apps not in the Marketplace (conversations.history and
 * conversations.replies): a few requests per window per app and method, and at most `maxItems` messages per
 * page (Slack: 1 request a minute and 15 messages for such apps created since May 2025). A request over the
 * limit is answered 429 with Retry-After in whole seconds, as Slack does.
 */
export interface ReadLimit {
  /** Requests allowed per window, per app and method. */
  readonly perWindow: number;
  readonly windowMs: number;
  /** The largest `limit` a page may have. */
  readonly maxItems: number;
}

export const READ_METHODS = new Set(['conversations.history', 'conversations.replies']);

export class ReadLimits {
  limit: ReadLimit | undefined;
  private readonly calls = new Map<string, number[]>();

  /** Seconds to wait when this call is over the limit, else undefined (and the call is counted). */
  check(app: string, method: string, now = Date.now()): number | undefined {
    const limit = this.limit;
    if (!limit || !READ_METHODS.has(method)) return undefined;
    const key = `${app}:${method}`;
    const recent = (this.calls.get(key) ?? []).filter((at) => now - at < limit.windowMs);
    this.calls.set(key, recent);
    if (recent.length >= limit.perWindow) {
      const oldest = recent[0] ?? now;
      return Math.max(1, Math.ceil((limit.windowMs - (now - oldest)) / 1000));
    }
    recent.push(now);
    return undefined;
  }

  /** The page size a read may have. */
  pageSize(asked: number): number {
    return Math.min(asked, this.limit?.maxItems ?? 1000);
  }
}
