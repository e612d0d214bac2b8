import type { AdapterSink } from '../../src/ports.js';

/** How often, at most, a room's mark is written to the store while live messages flow. */
const MARK_EVERY_MS = 10_000;

/**
 * Where each room's next catch-up starts: the newest message forwarded while the room was in sync (caught up,
 * and no connection dropped since), written to the bridge now and then (`AdapterSink.caughtUp`) so a restart
 * starts there too. A room that may have missed messages is not in sync until its next catch-up.
 */
export class RoomMarks {
  private readonly newest = new Map<string, string>();
  private readonly inSync = new Set<string>();
  /** Rooms that were in sync when a connection dropped: in sync again if the platform resends what they missed. */
  private readonly suspended = new Set<string>();
  private readonly markedAt = new Map<string, number>();

  constructor(
    private readonly deps: {
      readonly platform: string;
      /** Orders two message ids of the platform. */
      readonly compare: (a: string, b: string) => number;
      readonly sink: () => AdapterSink | undefined;
      readonly clock?: () => number;
    },
  ) {}

  /** Where a room's catch-up starts: the last message known in sync, else the bridge's mark. */
  start(room: string): string | undefined {
    return this.newest.get(room) ?? this.deps.sink()?.lastMessageId(this.deps.platform, room);
  }

  /** A live message was forwarded: while the room is in sync, the next catch-up starts after it. */
  forwarded(room: string, id: string): void {
    if (!this.inSync.has(room)) return;
    const known = this.newest.get(room);
    if (known && this.deps.compare(id, known) <= 0) return;
    this.newest.set(room, id);
    const now = this.now();
    if (now - (this.markedAt.get(room) ?? 0) >= MARK_EVERY_MS) this.mark(room, id, now, true);
  }

  /** Whether the room is in sync now (caught up, and no connection dropped since). */
  synced(room: string): boolean {
    return this.inSync.has(room);
  }

  /**
   * The room's catch-up is done up to `id` (undefined: the bridge knew nothing of it): it is in sync. `id` is the
   * newest message the catch-up read: a mark moves only over history actually read.
   */
  caughtUp(room: string, id: string | undefined): void {
    this.inSync.add(room);
    this.suspended.delete(room);
    if (id === undefined) return;
    this.newest.set(room, id);
    this.mark(room, id, this.now());
  }

  /** A connection dropped: these rooms (all, without a list) may miss messages until their next catch-up. */
  dropped(rooms?: readonly string[]): void {
    for (const room of rooms ?? [...this.inSync]) {
      if (this.inSync.delete(room)) this.suspended.add(room);
    }
  }

  /**
   * The platform resends what the dropped rooms missed (a short gap): the rooms in sync when it dropped are in sync
   * again, their marks where they were.
   */
  resumed(): void {
    for (const room of this.suspended) this.inSync.add(room);
    this.suspended.clear();
  }

  /** What the dropped rooms missed must be read: each stays out of sync until its own catch-up. */
  unresumable(): void {
    this.suspended.clear();
  }

  /** Writes every in-sync room's mark (a clean stop). */
  flush(): void {
    const now = this.now();
    for (const room of this.inSync) {
      const id = this.newest.get(room);
      if (id) this.mark(room, id, now, true);
    }
  }

  private now(): number {
    return (this.deps.clock ?? Date.now)();
  }

  /** `live`: a room already caught up moves its mark on (no catch-up ends: the room decides nothing). */
  private mark(room: string, id: string, now: number, live = false): void {
    this.markedAt.set(room, now);
    const sink = this.deps.sink();
    if (live && sink?.forwarded) sink.forwarded(this.deps.platform, room, id);
    else sink?.caughtUp?.(this.deps.platform, room, id);
  }
}
