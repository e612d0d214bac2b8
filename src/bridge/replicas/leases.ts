/**
 * The rooms this bridge holds when several bridges share one database (replicas): it takes a room's lease before
 * serving it, renews its leases every third of their length, and gives a room up — stops acting on it — as soon as
 * a renewal fails to keep it or its lease may be about to end unrenewed (the database's clock decides the end; this
 * bridge counts from the moment it asked, which is never later). Every decision is committed with the room's fencing
 * token, so even a bridge that was paused past its lease writes nothing for a room it lost.
 */
import type { Logger } from '../../log.js';
import { metrics } from '../../metrics.js';
import type { Fence, LeasePort } from '../../store/port.js';

interface Held {
  readonly token: number;
  /** This bridge's clock: the lease is surely live until then (it was asked for at or after that minus its length). */
  validUntil: number;
}

export interface LeaseKeeperDeps {
  readonly leases: LeasePort;
  /** REPLICA_ID. */
  readonly replica: string;
  /** ROOM_LEASE_S in ms. */
  readonly ttlMs: number;
  readonly clock: () => number;
  readonly log: Logger;
  /** Marks this bridge seen in the registry of replicas, with each renewal. */
  readonly beat?: (() => Promise<void>) | undefined;
}

export class LeaseKeeper {
  private readonly held = new Map<number, Held>();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private stopped = false;
  private readonly listeners: Array<(roomId: number) => void> = [];

  constructor(private readonly deps: LeaseKeeperDeps) {}

  /** Calls `listener` with each room this bridge held and no longer does: it must stop acting on it. */
  onLost(listener: (roomId: number) => void): void {
    this.listeners.push(listener);
  }

  /** A decision was refused under the room's token: the room is another bridge's now. */
  forget(roomId: number): void {
    this.lose(roomId, 'a decision was refused under its token');
  }

  get replica(): string {
    return this.deps.replica;
  }

  /** How many rooms this bridge holds now. */
  get count(): number {
    return this.held.size;
  }

  /** Before this much of a lease is left unrenewed, the bridge stops acting on the room. */
  private get margin(): number {
    return Math.min(2000, this.deps.ttlMs / 5);
  }

  /** Takes (or keeps) a room; its fence, or undefined while another bridge serves it. */
  async take(roomId: number): Promise<Fence | undefined> {
    const fence = this.fence(roomId);
    if (fence || this.stopped) return fence;
    const askedAt = this.deps.clock();
    const lease = await this.deps.leases.acquire(roomId, this.deps.replica, this.deps.ttlMs);
    if (!lease) return undefined;
    this.held.set(roomId, { token: lease.token, validUntil: askedAt + this.deps.ttlMs });
    metrics.roomLeases.set(this.held.size);
    return { token: lease.token };
  }

  /** The fence to commit a room's decision with; undefined when this bridge does not (surely) hold it. */
  fence(roomId: number): Fence | undefined {
    const held = this.held.get(roomId);
    if (!held) return undefined;
    if (this.deps.clock() < held.validUntil - this.margin) return { token: held.token };
    this.lose(roomId, 'its lease was not renewed in time');
    return undefined;
  }

  /** Renews every third of a lease's length, until `stop`. */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(
      () => {
        void this.renew();
        void this.deps.beat?.();
      },
      Math.max(100, Math.floor(this.deps.ttlMs / 3)),
    );
    this.timer.unref();
  }

  /** Renews the leases held (one statement); a room not renewed is lost. One renewal at a time. */
  renew(): Promise<void> {
    this.renewing ??= this.renewAll().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async renewAll(): Promise<void> {
    const rooms = [...this.held.keys()];
    if (rooms.length === 0) return;
    const askedAt = this.deps.clock();
    try {
      const kept = await this.deps.leases.renew(this.deps.replica, rooms, this.deps.ttlMs);
      const tokens = new Map(kept.map((lease) => [lease.roomId, lease.token]));
      for (const roomId of rooms) {
        const held = this.held.get(roomId);
        if (!held) continue;
        if (tokens.get(roomId) === held.token) held.validUntil = askedAt + this.deps.ttlMs;
        else this.lose(roomId, 'another bridge holds it now');
      }
    } catch (error) {
      this.deps.log.warn({ err: error, rooms: rooms.length }, 'renewing room leases failed; trying again');
      // What may lapse before the next try is given up now, before another bridge can take it.
      for (const roomId of rooms) this.fence(roomId);
    }
  }

  private lose(roomId: number, why: string): void {
    if (!this.held.delete(roomId)) return;
    metrics.roomLeases.set(this.held.size);
    this.deps.log.warn({ room: roomId, replica: this.deps.replica }, `room lease lost: ${why}`);
    for (const listener of this.listeners) listener(roomId);
  }

  /**
   * Stops renewing and gives every room up at once (a clean shutdown): other bridges may take them now, and take up
   * at once the work the rooms in `busy` left (a turn cut short, posts not sent).
   */
  async stop(busy: ReadonlySet<number> = new Set()): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing?.catch(() => undefined);
    const rooms = [...this.held.keys()];
    this.held.clear();
    metrics.roomLeases.set(0);
    if (rooms.length === 0) return;
    const { leases, replica } = this.deps;
    try {
      await leases.handOver(
        replica,
        rooms.filter((id) => busy.has(id)),
      );
      await leases.release(
        replica,
        rooms.filter((id) => !busy.has(id)),
      );
    } catch (error) {
      this.deps.log.warn({ err: error }, 'releasing room leases failed: they lapse on their own');
    }
  }
}
