/** Thrown by `Deadline.race` when the time is up (or the signal aborted) first. */
export class DeadlinePassed extends Error {}

/** One time limit for a sequence of engine calls, also ended by `signal`. */
export class Deadline {
  private readonly end: number;
  private readonly expired: Promise<never>;
  private timer: NodeJS.Timeout | undefined;
  private onAbort: (() => void) | undefined;

  constructor(
    ms: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.end = Date.now() + ms;
    this.expired = new Promise<never>((_, reject) => {
      const expire = () => reject(new DeadlinePassed());
      this.timer = setTimeout(expire, ms);
      this.onAbort = expire;
      signal?.addEventListener('abort', expire, { once: true });
      if (signal?.aborted) expire();
    });
    // Nobody may be racing it when it fires.
    this.expired.catch(() => undefined);
  }

  race<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.expired]);
  }

  remaining(): number {
    return this.signal?.aborted ? 0 : Math.max(0, this.end - Date.now());
  }

  clear(): void {
    clearTimeout(this.timer);
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort);
  }
}
