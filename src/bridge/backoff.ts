/**
 * How long the shell waits before trying again what failed for a reason that passes (a store that cannot write, a
 * platform answering 5xx): doubling from a first wait up to a ceiling, so an outage of hours costs a try a minute.
 */

/** The wait (ms) before the next try, after `tries` failed tries (1, 2, ...). */
export type Backoff = (tries: number) => number;

/** First wait, then twice the last, never more than the ceiling. */
export function doubling(firstMs: number, ceilingMs: number): Backoff {
  return (tries) => Math.min(ceilingMs, firstMs * 2 ** Math.max(0, Math.min(tries - 1, 30)));
}

/** The same waits, never more than `ceilingMs`. */
export function capped(backoff: Backoff, ceilingMs: number): Backoff {
  return (tries) => Math.min(ceilingMs, backoff(tries));
}

/** The bridge's waits: 1 s, 2 s, 4 s ... up to a minute between tries. */
export const DEFAULT_BACKOFF: Backoff = doubling(1000, 60_000);

/** A wait that a stop cuts short (it then resolves at once). */
export class Pause {
  private timers = new Map<NodeJS.Timeout, () => void>();
  private stopped = false;

  /** Resolves after `ms`, or at once when stopped, or when `until` resolves first. */
  wait(ms: number, until?: Promise<unknown>): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.timers.delete(timer);
        resolve();
      };
      const timer = setTimeout(end, ms);
      this.timers.set(timer, resolve);
      void until?.then(end, end);
    });
  }

  /** Ends every wait now, and every later one at once. */
  stop(): void {
    this.stopped = true;
    for (const [timer, resolve] of this.timers) {
      clearTimeout(timer);
      resolve();
    }
    this.timers.clear();
  }
}
