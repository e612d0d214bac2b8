/** How often a waiting call looks again (holds of other bridges settle without a word to this one). */
const POLL_MS = 1000;

/** The calls waiting for money held by calls under way: each settle of this bridge wakes them. */
export class Settles {
  private readonly waiting = new Set<() => void>();

  /** Until a hold of this bridge settles, or a while passes (another bridge's may have), or the call is stopped. */
  next(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const end = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        signal?.removeEventListener('abort', stopped);
      };
      const done = () => {
        end();
        resolve();
      };
      const stopped = () => {
        end();
        reject(signal?.reason);
      };
      const timer = setTimeout(done, POLL_MS);
      this.waiting.add(done);
      signal?.addEventListener('abort', stopped, { once: true });
    });
  }

  /** A hold settled: every waiting call tries again. */
  wake(): void {
    for (const done of [...this.waiting]) done();
  }
}
