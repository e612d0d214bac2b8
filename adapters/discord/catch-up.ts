/**
 * After a (re)connect, reads what a room received while nobody listened. A catch-up starts where the room was last
 * known to be complete: the newest message forwarded while connected (a reconnect), else what the bridge recorded
 * before this start — never a message that arrived since.
 */
import { type APIMessage, type Client, Routes } from 'discord.js';
import type { Logger } from '../../src/log.js';
import type { AdapterSink } from '../../src/ports.js';
import { CatchUpRetries } from '../shared/catch-up-retries.js';
import { RoomMarks } from '../shared/room-marks.js';
import { PLATFORM } from './inbound.js';

/** Snowflakes order by time; compare them as numbers, not strings. */
export function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const DISCORD_EPOCH = 1_420_070_400_000n;

/** The smallest snowflake of a moment (to ask for messages after it). */
export function snowflakeAt(ms: number): string {
  return ((BigInt(Math.max(Number(DISCORD_EPOCH), Math.floor(ms))) - DISCORD_EPOCH) << 22n).toString();
}

export interface Missed {
  /** Oldest first. */
  readonly messages: APIMessage[];
  /** More were missed than `max`: the oldest of them were not fetched. */
  readonly truncated: boolean;
}

/**
 * The messages after `after`, at most `max`: read newest first (`before=` pages of 100), so when more were
 * missed than the bound, the newest are kept and the oldest left out.
 */
export async function fetchMissed(client: Client, channelId: string, after: string, max: number): Promise<Missed> {
  const newestFirst: APIMessage[] = [];
  let before: string | undefined;
  while (newestFirst.length < max) {
    const limit = Math.min(100, max - newestFirst.length);
    const query = new URLSearchParams({ limit: String(limit), ...(before ? { before } : {}) });
    const page = (await client.rest.get(Routes.channelMessages(channelId), { query })) as APIMessage[];
    page.sort((a, b) => compareIds(b.id, a.id));
    for (const message of page) {
      if (compareIds(message.id, after) <= 0) return { messages: newestFirst.reverse(), truncated: false };
      newestFirst.push(message);
    }
    const oldest = page.at(-1);
    if (page.length < limit || !oldest) return { messages: newestFirst.reverse(), truncated: false };
    before = oldest.id;
  }
  // Exactly `max` may have been missed: one more look says whether anything older was left out.
  const query = new URLSearchParams({ limit: '1', ...(before ? { before } : {}) });
  const older = (await client.rest.get(Routes.channelMessages(channelId), { query })) as APIMessage[];
  const truncated = older.some((message) => compareIds(message.id, after) > 0);
  return { messages: newestFirst.reverse(), truncated };
}

/**
 * Which rooms are in sync and where each catch-up starts (RoomMarks), and each room's catch-up; a room whose history
 * could not be read is read again later (CatchUpRetries), in the background.
 */
export class CatchUpRooms {
  private readonly marks: RoomMarks;
  private readonly retries: CatchUpRetries;

  constructor(
    private readonly deps: {
      readonly sink: () => AdapterSink | undefined;
      readonly max: number;
      readonly log: Logger;
    },
  ) {
    this.marks = new RoomMarks({ platform: PLATFORM, compare: compareIds, sink: deps.sink });
    this.retries = new CatchUpRetries({ log: deps.log, what: 'discord catch-up' });
  }

  forwarded(room: string, id: string): void {
    this.marks.forwarded(room, id);
  }

  dropped(rooms: readonly string[]): void {
    this.marks.dropped(rooms);
  }

  /** A stop: marks written, nothing tried again. */
  stop(): void {
    this.retries.stop();
    this.marks.flush();
  }

  /**
   * A room's catch-up (see `read`). When its history cannot be read, it is read again after 1 s, 2 s, 4 s … until
   * it succeeds or the room is in sync another way (another bot read it); nothing waits on those retries.
   */
  async room(
    room: string,
    fetch: (after: string, max: number) => Promise<Missed>,
    forward: (message: APIMessage) => Promise<void>,
  ): Promise<void> {
    if (await this.read(room, fetch, forward)) this.retries.succeeded(room);
    else this.retries.failed(room, async () => this.marks.synced(room) || this.read(room, fetch, forward));
  }

  /**
   * Fetches and forwards (oldest first, as missed) what a room received after its mark; the room is in sync
   * after, its mark at the newest message read. A room the bridge never heard of has nothing to fetch. False when
   * the history could not be read: the mark stays where it was.
   */
  private async read(
    room: string,
    fetch: (after: string, max: number) => Promise<Missed>,
    forward: (message: APIMessage) => Promise<void>,
  ): Promise<boolean> {
    if (!this.deps.sink()) return true;
    const after = this.marks.start(room);
    if (!after || this.deps.max <= 0) {
      this.marks.caughtUp(room, after);
      return true;
    }
    let missed: Missed;
    try {
      missed = await fetch(after, this.deps.max);
    } catch (error) {
      this.deps.log.warn({ err: error, channel: room, after }, 'discord catch-up: the history could not be read');
      return false;
    }
    if (missed.truncated) {
      this.deps.log.warn(
        { channel: room, after, oldestFetched: missed.messages[0]?.id, max: this.deps.max },
        'more messages were missed than CATCHUP_MAX: the oldest of them were not fetched',
      );
    }
    if (missed.messages.length > 0) {
      this.deps.log.info({ channel: room, count: missed.messages.length }, 'catching up on discord');
    }
    let through = after;
    for (const message of missed.messages) {
      await forward(message);
      through = message.id;
    }
    this.marks.caughtUp(room, through);
    return true;
  }
}
