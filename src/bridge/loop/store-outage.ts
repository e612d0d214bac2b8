/**
 * A store that cannot write for a while (a full disk, a database another process keeps locked): the rooms keep
 * what they could not store in memory and try again (room-actor.ts). This keeps the count of what is held against
 * its bound, tells each room once that its messages wait (and once that they are saved), logs and counts. While a
 * room fails, the store is looked at every PROBE_MS (one health-check write for the bridge): the rooms' tries grow
 * up to a minute apart, and the first look that works after one that failed has every waiting room try again within
 * a second.
 */
import { describeError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { metrics } from '../../metrics.js';
import type { Backoff } from '../backoff.js';

/** A room as the outage names it (the line goes to its platform room). */
export interface RoomPlace {
  readonly key: string;
  readonly platform: string;
  readonly channel: string;
}

/** A room told about an outage is not told again about the next one within this time (a store that flaps). */
const QUIET_MS = 10 * 60_000;
/** How often the store is looked at while a room's writes fail. */
const PROBE_MS = 1_000;

/** A promise and what resolves it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

export const failingLine = (error: unknown) =>
  `The bridge cannot save messages right now (${describeError(error)}). What is said here is kept and saved as soon as it can be; the agents answer then.`;

export const recoveredLine = (kept: number) =>
  kept > 0
    ? `The bridge can save messages again; the ${kept === 1 ? 'message' : `${kept} messages`} kept meanwhile ${kept === 1 ? 'is' : 'are'} saved now.`
    : 'The bridge can save messages again.';

const FAILING_LINE =
  /^The bridge cannot save messages right now \(.*\)\. What is said here is kept and saved as soon as it can be; the agents answer then\.$/s;
const RECOVERED_LINE =
  /^The bridge can save messages again(?:; the (?:message|\d+ messages) kept meanwhile (?:is|are) saved now)?\.$/;

/**
 * Whether a message of the bridge's own identity is one of these lines: read again by a catch-up after a restart
 * (or by another replica), it is recognised by its words, as the ids of the lines posted are known to the process
 * that posted them only.
 */
export const isOutageLine = (text: string) => FAILING_LINE.test(text) || RECOVERED_LINE.test(text);

export class StoreOutage {
  private heldCount = 0;
  /** Rooms whose store writes fail now; those told about it, and when they were last told. */
  private readonly failing = new Set<string>();
  private readonly told = new Set<string>();
  private readonly toldAt = new Map<string, number>();
  /** Resolved (and made anew) when the store writes again: the rooms waiting to try again try now. */
  private writes = signal();
  private probe: NodeJS.Timeout | undefined;
  /** Whether the last look at the store failed (a look that works after one that failed wakes the rooms). */
  private lookFailed = true;

  constructor(
    private readonly deps: {
      /** How many platform events may be held in memory at once, over every room (HELD_MESSAGES_MAX). */
      readonly max: number;
      readonly backoff: Backoff;
      /** Posts a line straight to a platform room (nothing is stored). */
      readonly notice: (platform: string, channel: string, text: string) => Promise<unknown>;
      /** Proves the store can be written now (the health check); rejects when it cannot. */
      readonly ping?: (() => Promise<void>) | undefined;
      readonly clock: () => number;
      readonly log: Logger;
    },
  ) {}

  /** Platform events held in memory now. */
  get held(): number {
    return this.heldCount;
  }

  /**
   * Resolves the next time the store is seen writing again (a room waiting to try again tries then), each waiter at
   * a random moment within a look's time: with replicas, the rooms each gave up go to both again rather than all to
   * the one whose look came first.
   */
  get back(): Promise<void> {
    return this.writes.promise.then(
      () =>
        new Promise<void>((resolve) => {
          setTimeout(resolve, Math.random() * PROBE_MS).unref();
        }),
    );
  }

  /** Stops looking at the store (shutdown). */
  stop(): void {
    if (this.probe) clearTimeout(this.probe);
    this.probe = undefined;
    this.failing.clear();
  }

  /** Whether the room's store writes fail now. */
  isFailing(room: string): boolean {
    return this.failing.has(room);
  }

  /**
   * A try at storing for `room` failed (`tries` so far): the first of an outage tells the room, once. Returns how
   * long to wait before the next try.
   */
  failed(room: RoomPlace, error: unknown, tries: number): number {
    metrics.storeFailures.inc();
    const wait = this.deps.backoff(tries);
    this.look();
    if (this.failing.has(room.key)) {
      this.deps.log.warn({ err: error, room: room.key, tries, nextTryMs: wait }, 'the store still cannot write');
      return wait;
    }
    this.failing.add(room.key);
    this.deps.log.error(
      { err: error, room: room.key, nextTryMs: wait },
      'the store could not take a decision: what the room received is kept in memory and tried again',
    );
    const now = this.deps.clock();
    if (now - (this.toldAt.get(room.key) ?? Number.NEGATIVE_INFINITY) >= QUIET_MS) {
      this.told.add(room.key);
      this.toldAt.set(room.key, now);
      void this.deps.notice(room.platform, room.channel, failingLine(error));
    }
    return wait;
  }

  /** The room's store writes work again; `kept`: its platform messages waiting to be stored now. */
  recovered(room: RoomPlace, kept: number): void {
    if (!this.failing.delete(room.key)) return;
    // The others waiting need not wait for their next try.
    this.wake();
    this.deps.log.info({ room: room.key, kept }, 'the store writes again');
    if (this.told.delete(room.key)) void this.deps.notice(room.platform, room.channel, recoveredLine(kept));
  }

  /** One more platform event kept in memory; false past the bound (it is then not kept). */
  hold(): boolean {
    if (this.heldCount >= this.deps.max) return false;
    this.count(1);
    return true;
  }

  /** Events that are in memory already (queued when the store began to fail) are counted, past the bound too. */
  count(events: number): void {
    this.heldCount += events;
    metrics.inboundHeld.inc(events);
  }

  /** Held events stored (or let go at a stop). */
  release(events = 1): void {
    if (events <= 0) return;
    this.heldCount -= events;
    metrics.inboundHeld.dec(events);
  }

  /** A platform message was not kept (the bound): it is not stored in this run. */
  lost(room: string, platformId: string): void {
    metrics.inboundLost.inc();
    this.deps.log.error(
      { room, id: platformId, held: this.heldCount, max: this.deps.max },
      'too many messages wait for the store (HELD_MESSAGES_MAX): this one is not kept; the next start reads it again from the platform',
    );
  }

  /** Looks at the store in PROBE_MS, and again after each look that fails while a room fails. */
  private look(): void {
    if (this.probe || !this.deps.ping) return;
    this.probe = setTimeout(() => void this.probeOnce(), PROBE_MS);
    this.probe.unref();
  }

  private async probeOnce(): Promise<void> {
    const ping = this.deps.ping;
    if (!ping || this.failing.size === 0) {
      this.probe = undefined;
      return;
    }
    let works = true;
    try {
      await ping();
    } catch {
      works = false;
    }
    if (this.probe === undefined) return; // stopped meanwhile
    this.probe = undefined;
    if (!works) {
      this.lookFailed = true;
      this.look();
      return;
    }
    // Once per return of the store: a store whose health check works while decisions fail is not tried every second.
    if (this.lookFailed) this.wake();
    this.lookFailed = false;
  }

  private wake(): void {
    const { resolve } = this.writes;
    this.writes = signal();
    resolve();
  }
}
