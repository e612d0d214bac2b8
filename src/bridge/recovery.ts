import type { Logger } from '../log.js';
import { type OpenWork, planRecovery } from '../room/recovery.js';
import type { RoomMessage } from '../room/types.js';
import type { ChannelRow, JournalStore, OutboxEntry } from '../store/index.js';
import type { AgentTurns } from './agent-turns.js';
import type { Room, Rooms } from './rooms.js';

/**
 * On start, what a crash cut: posts written down but maybe not sent go out first (once: the platform
 * deduplicates or they are found already there), then cut rounds go on where they stopped — or are
 * dropped when a newer human message supersedes them.
 */
export class Recovery {
  constructor(
    private readonly deps: {
      readonly journal: JournalStore;
      readonly channels: () => ChannelRow[];
      readonly rooms: Rooms;
      readonly turns: Pick<AgentTurns, 'resend'>;
      readonly resumeRound: (room: Room, id: number, messageId: number) => void;
      readonly message: (room: Room, id: number) => RoomMessage | undefined;
      readonly newestHuman: (room: Room) => number | undefined;
      readonly log: Logger;
    },
  ) {}

  /**
   * Queues, first in each room, the posts a previous run left unsent; each waits for `ready` (the adapters
   * connected: true; their start failed: false, and the posts stay for the next start). Resolves when done.
   */
  deliver(ready: Promise<boolean>): Promise<unknown> {
    const byChannel = new Map<number, OutboxEntry[]>();
    for (const entry of this.deps.journal.pendingPosts()) {
      byChannel.set(entry.channelId, [...(byChannel.get(entry.channelId) ?? []), entry]);
    }
    const rows = new Map(this.deps.channels().map((row) => [row.id, row]));
    const tasks: Promise<void>[] = [];
    for (const [channelId, entries] of byChannel) {
      const room = this.room(rows.get(channelId));
      if (!room) continue;
      this.deps.log.info({ room: room.key, posts: entries.length }, 'sending the posts a restart left unsent');
      tasks.push(
        room.actor.enqueue(async () => {
          if (!(await ready)) return;
          for (const entry of entries) await this.deps.turns.resend(room, entry);
        }),
      );
    }
    return Promise.all(tasks);
  }

  /**
   * Rounds a crash cut or a catch-up fetched (all rooms, or one): resumed in order (their turns with them),
   * or dropped when a newer human message supersedes them.
   */
  resume(only?: string): void {
    const { journal, log } = this.deps;
    const open = journal.open().filter((row) => only === undefined || row.room === only);
    if (open.length === 0) return;
    const rooms = new Map<string, Room | undefined>();
    const roomOf = (key: string) => {
      if (!rooms.has(key)) rooms.set(key, this.deps.rooms.byKey(key));
      return rooms.get(key);
    };
    const work: OpenWork[] = open.map((row) => {
      const room = roomOf(row.room);
      const message = room && row.messageId !== null ? this.deps.message(room, row.messageId) : undefined;
      return {
        id: row.id,
        room: row.room,
        kind: row.kind,
        parentId: row.parentId,
        ...(row.kind === 'round' ? { trigger: { kind: message?.kind ?? 'missing', id: row.messageId ?? 0 } } : {}),
      };
    });
    const steps = planRecovery(work, (key) => {
      const room = roomOf(key);
      return {
        newestHuman: room ? this.deps.newestHuman(room) : undefined,
        control: room?.state.turnState.control ?? 'humans',
      };
    });
    for (const step of steps) {
      const row = open.find((r) => r.id === step.id);
      const room = row ? roomOf(row.room) : undefined;
      if (step.kind === 'drop' || !row || !room || row.messageId === null) {
        journal.finish(step.id, 'dropped');
        continue;
      }
      log.debug({ room: row.room, round: row.id, message: row.messageId }, 'resuming a round');
      this.deps.resumeRound(room, row.id, row.messageId);
    }
  }

  private room(row: ChannelRow | undefined): Room | undefined {
    if (!row) return undefined;
    try {
      return this.deps.rooms.get(row.platform, row.channel, row.directAgent ?? undefined);
    } catch (error) {
      // Its platform is not configured now: the posts wait for a start that has it.
      this.deps.log.warn({ err: error, platform: row.platform }, 'unsent posts of a platform not connected');
      return undefined;
    }
  }
}
