/**
 * What the log says when the store's connections drop (the server restarted, a partition reset them, their backends
 * were ended): one line when the first one drops, naming the database (its password redacted), and one when the
 * database answers again, however many connections dropped and however long it took. Meanwhile the database is
 * looked at with growing waits (half a second, doubling up to 15 s), so the line "back" comes even when nothing
 * else asks; the first connection the pool opens again says so too. The pool itself opens new connections for the
 * next statements; this only watches and tells.
 */
import type pg from 'pg';
import type { Logger } from '../../log.js';
import { redactUrl } from '../../secrets.js';

/** The wait (ms) before the next look at a database that dropped, after `tries` looks (1, 2, ...). */
export const reconnectWait = (tries: number): number => Math.min(15_000, 500 * 2 ** Math.min(tries - 1, 10));

export class ConnectionWatch {
  private down: { since: number; tries: number; dropped: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly deps: {
      readonly pool: pg.Pool;
      readonly url: string;
      readonly log: Logger;
      readonly wait?: (tries: number) => number;
      readonly clock?: () => number;
    },
  ) {}

  /** Whether the database is being waited for (a connection dropped and it has not answered since). */
  get waiting(): boolean {
    return this.down !== undefined;
  }

  /** The pool opened a connection: when one had dropped, the database is back. */
  connected(): void {
    if (this.down && !this.stopped) this.back(this.down);
  }

  /** A connection of the pool failed: said once per outage, then the database is looked at until it answers. */
  dropped(error: Error): void {
    if (this.stopped) return;
    if (this.down) {
      this.down.dropped += 1;
      return;
    }
    this.down = { since: this.now(), tries: 0, dropped: 1 };
    const reason = error.message || (error as NodeJS.ErrnoException).code || 'no reason given';
    this.deps.log.warn(
      { err: error },
      `the database connection to ${redactUrl(this.deps.url)} dropped (${reason}); connecting again`,
    );
    this.next();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private next(): void {
    const down = this.down;
    if (this.stopped || !down) return;
    down.tries += 1;
    this.timer = setTimeout(() => void this.look(), (this.deps.wait ?? reconnectWait)(down.tries));
    this.timer.unref();
  }

  private async look(): Promise<void> {
    this.timer = undefined;
    const down = this.down;
    if (this.stopped || !down) return;
    try {
      await this.deps.pool.query('SELECT 1');
    } catch (error) {
      this.deps.log.debug({ err: error, tries: down.tries }, 'the database does not answer yet');
      if (this.down === down) this.next();
      return;
    }
    if (this.down === down && !this.stopped) this.back(down);
  }

  private back(down: { since: number; tries: number; dropped: number }): void {
    this.down = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const seconds = ((this.now() - down.since) / 1000).toFixed(1);
    this.deps.log.info(
      { droppedConnections: down.dropped, tries: down.tries },
      `the database connections to ${redactUrl(this.deps.url)} are back (after ${seconds} s)`,
    );
  }

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }
}
