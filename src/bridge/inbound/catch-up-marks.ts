import type { Logger } from '../../log.js';
import type { AdapterSink } from '../../ports.js';
import type { RoomRecord, RoomStore } from '../../store/port.js';

/** The rooms as the marks reach them: a catch-up done (decided), or every event taken so far (nothing decided). */
export interface MarkedRooms {
  /** Tells the room its catch-up is done; true once it has taken that. */
  caughtUp(room: string): Promise<boolean>;
  /** True once the room has taken every event that reached it before. */
  taken(room: string): Promise<boolean>;
}

/**
 * What the sink tells adapters about catching up: where each room's catch-up starts — the mark the adapter last
 * recorded (`caughtUp`), else the newest platform id stored before this start (never one stored since: a live
 * message arriving right after the connection must not hide what was missed) — and which rooms the store knows.
 * Read once at start (the adapters ask synchronously); kept up to date as rooms store messages and catch up.
 *
 * A mark is stored once the room has taken every event before it (its catch-up's end goes through the room's queue
 * behind them), so it never passes a message held while the store could not write. A message not kept at all (too
 * many waited) pins the room's mark, for the rest of this run, at the newest id stored before it: the next start
 * reads it again from the platform.
 */
export class CatchUpMarks {
  private readonly marks = new Map<string, string | undefined>();
  private readonly rooms = new Map<string, { platform: string; channel: string; agent?: string; new?: boolean }>();
  /** The first id stored in rooms the start did not know (where a later catch-up of such a room begins). */
  private readonly live = new Map<string, string>();
  /** The newest id each room stored in this run. */
  private readonly newest = new Map<string, string>();
  /** Rooms that lost a message in this run: the mark they keep (undefined: none is known). */
  private readonly pinned = new Map<string, string | undefined>();

  constructor(
    private readonly store: Pick<RoomStore, 'caughtUp' | 'lastPlatformMessageId' | 'setCaughtUp'>,
    private readonly log: Logger,
  ) {}

  /** Reads the marks of the rooms the store knows (most recently active first, per platform). */
  async load(
    records: readonly RoomRecord[],
    active: (platform: string) => Promise<Array<{ channel: string; agent?: string }>>,
  ): Promise<void> {
    for (const record of records) {
      let mark = await this.store.caughtUp(record.platform, record.channel);
      if (mark === undefined) {
        // Never marked: complete up to what it stored before this start. Stored as its mark now, so a later start
        // begins there too even if this one's catch-up fails and live messages are stored after the gap.
        mark = await this.store.lastPlatformMessageId(record.platform, record.channel);
        if (mark !== undefined) await this.store.setCaughtUp(record.platform, record.channel, mark);
      }
      this.marks.set(record.key, mark);
    }
    for (const platform of new Set(records.map((r) => r.platform))) {
      for (const room of await active(platform)) {
        this.rooms.set(`${platform}:${room.channel}`, { platform, ...room });
      }
    }
  }

  /**
   * A room stored a platform message. A room the start did not know is one to catch up on from now on, starting
   * at the first message it stored (what came after may have a gap: a connection dropped), until it is marked.
   */
  stored(room: Pick<RoomRecord, 'key' | 'platform' | 'channel' | 'directAgent'>, platformId: string): void {
    this.newest.set(room.key, platformId);
    if (!this.marks.has(room.key) && !this.live.has(room.key)) this.live.set(room.key, platformId);
    if (!this.rooms.has(room.key)) {
      this.rooms.set(room.key, {
        platform: room.platform,
        channel: room.channel,
        ...(room.directAgent ? { agent: room.directAgent } : {}),
        new: true,
      });
    }
  }

  /**
   * A message of the room was not kept: the room's mark stays at the newest id stored before it (stored now, if the
   * store takes it; every later mark of the room in this run is that one).
   */
  lost(room: string): void {
    if (this.pinned.has(room)) return;
    const at = this.newest.get(room) ?? this.marks.get(room);
    this.pinned.set(room, at);
    if (at === undefined) {
      this.log.warn({ room }, 'a room that stored nothing yet lost a message: the next start cannot read it again');
      return;
    }
    this.marks.set(room, at);
    this.write(room, at);
  }

  /**
   * `caughtUp` tells the room its catch-up is done; the mark is stored once the room has taken that. `taken` resolves
   * once the room has taken every event that arrived before (a live mark: stored then, with no decision).
   */
  sink(rooms: MarkedRooms): Pick<AdapterSink, 'lastMessageId' | 'caughtUp' | 'forwarded' | 'rooms' | 'directRooms'> {
    const mark = (platform: string, channel: string, id: string, live: boolean) => {
      const key = `${platform}:${channel}`;
      const at = this.pinned.has(key) ? this.pinned.get(key) : id;
      if (at !== undefined) this.marks.set(key, at);
      void (live ? rooms.taken(key) : rooms.caughtUp(key)).then(
        (done) => {
          if (done && at !== undefined) this.write(key, at);
        },
        (error: unknown) => this.log.error({ err: error, room: key }, 'a catch-up could not be finished'),
      );
    };
    return {
      lastMessageId: (platform, channel) => {
        const key = `${platform}:${channel}`;
        return this.marks.has(key) ? this.marks.get(key) : this.live.get(key);
      },
      caughtUp: (platform, channel, id) => mark(platform, channel, id, false),
      forwarded: (platform, channel, id) => mark(platform, channel, id, true),
      rooms: (platform) =>
        [...this.rooms.values()]
          .filter((room) => room.platform === platform)
          .map((room) => ({
            channel: room.channel,
            ...(room.agent ? { agent: room.agent } : {}),
            ...(room.new ? { new: true } : {}),
          })),
      directRooms: (platform) =>
        [...this.rooms.values()]
          .filter((room) => room.platform === platform && room.agent)
          .map((room) => ({ channel: room.channel, agent: room.agent ?? '' })),
    };
  }

  private write(room: string, mark: string): void {
    const at = room.indexOf(':');
    this.store
      .setCaughtUp(room.slice(0, at), room.slice(at + 1), mark)
      .catch((error: unknown) => this.log.error({ err: error, room }, 'a catch-up mark could not be stored'));
  }
}
