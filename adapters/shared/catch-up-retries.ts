/**
 * A catch-up that failed is tried again until it succeeds: after 1 s, then 2 s, 4 s … at most 5 minutes apart,
 * one schedule per key (a room, a conversation). Nothing waits on it: live messages go on meanwhile, and what the
 * retry finds is answered when it comes. The room's mark stays where it was until then (RoomMarks), so a restart
 * meanwhile reads the same gap again.
 */
import type { Logger } from '../../src/log.js';

/** The first retry's delay; each failure after it doubles the delay. */
export const FIRST_RETRY_MS = 1000;
/** The longest delay between two tries. */
export const MAX_RETRY_MS = 5 * 60_000;

/** One try: resolves true when the catch-up succeeded (a rejection counts as a failure). */
export type Attempt = () => Promise<boolean>;

interface Pending {
  attempt: Attempt;
  delayMs: number;
  timer: NodeJS.Timeout | undefined;
  running: boolean;
}

export class CatchUpRetries {
  private readonly pending = new Map<string, Pending>();
  private stopped = false;

  constructor(
    private readonly deps: {
      readonly log: Logger;
      /** What is retried, for the log ("discord catch-up"). */
      readonly what: string;
      readonly firstMs?: number;
      readonly maxMs?: number;
    },
  ) {}

  /**
   * `key`'s catch-up failed: `attempt` runs after the key's next delay, and again (each delay doubled) until it
   * resolves true. A retry already scheduled (or running) keeps its time and takes this attempt.
   */
  failed(key: string, attempt: Attempt): void {
    if (this.stopped) return;
    const known = this.pending.get(key);
    if (known && (known.timer || known.running)) {
      known.attempt = attempt;
      return;
    }
    const delayMs = known ? Math.min(known.delayMs * 2, this.maxMs) : this.firstMs;
    const entry: Pending = known ?? { attempt, delayMs, timer: undefined, running: false };
    entry.attempt = attempt;
    entry.delayMs = delayMs;
    this.pending.set(key, entry);
    this.deps.log.warn({ key, retryInMs: delayMs }, `${this.deps.what} failed: trying again in ${delayMs / 1000} s`);
    entry.timer = setTimeout(() => void this.run(key, entry), delayMs);
    entry.timer.unref();
  }

  /** `key` caught up another way: its retry is not needed (and the next failure starts from the first delay). */
  succeeded(key: string): void {
    const entry = this.pending.get(key);
    if (entry?.timer) clearTimeout(entry.timer);
    this.pending.delete(key);
  }

  /** Whether a retry of `key` is scheduled or running. */
  retrying(key: string): boolean {
    return this.pending.has(key);
  }

  /** Nothing is tried again (a stop). */
  stop(): void {
    this.stopped = true;
    for (const entry of this.pending.values()) if (entry.timer) clearTimeout(entry.timer);
    this.pending.clear();
  }

  private async run(key: string, entry: Pending): Promise<void> {
    entry.timer = undefined;
    entry.running = true;
    let ok = false;
    try {
      ok = await entry.attempt();
    } catch (error) {
      this.deps.log.warn({ err: error, key }, `${this.deps.what} failed`);
    }
    entry.running = false;
    if (this.stopped || this.pending.get(key) !== entry) return;
    if (ok) {
      this.pending.delete(key);
      this.deps.log.info({ key }, `${this.deps.what} succeeded on a retry`);
      return;
    }
    this.failed(key, entry.attempt);
  }

  private get firstMs(): number {
    return this.deps.firstMs ?? FIRST_RETRY_MS;
  }

  private get maxMs(): number {
    return this.deps.maxMs ?? MAX_RETRY_MS;
  }
}
