import type pg from 'pg';
import { LeaseLostError, RoundtableError } from '../../errors.js';
import type { RequestRow, Write } from '../../room/effects.js';
import type { Note } from '../../room/events.js';
import type { RoomState } from '../../room/state.js';
import type { MessageTokens, RoomMessage } from '../../room/types.js';
import type { CommitResult, DecisionRow, Fence, NoteRecord, RoomRecord, RoomStore, TranscriptRow } from '../port.js';
import { derivable, withDerived } from '../snapshot.js';
import {
  fold,
  type MessageDb,
  messageValues,
  type RequestDb,
  type RoutedMessage,
  requestValues,
  type TranscriptDb,
  toDecision,
  toMessage,
  toRequest,
  toTranscript,
} from '../sqlite/rows.js';
import { chatValues, UPSERT_CHAT } from './chats.js';
import { rows, run, type Sql, transaction } from './pool.js';
import { ROOM_SQL as Q } from './room-sql.js';
import { writeError } from './write-errors.js';

interface ChannelDb {
  id: number;
  platform: string;
  channel: string;
  direct_agent: string | null;
  state: string | null;
  /** The newest seq of the room's messages, and of its human messages (see snapshot.ts). */
  newest_seq: number | null;
  newest_human: number | null;
}

type MessageWrite = Extract<Write, { type: 'message' }>;

/** Thrown inside a commit's transaction to roll it back: a platform id it stores is stored already. */
const DUPLICATE = Symbol('duplicate');

/**
 * Rooms, their messages and their decisions in Postgres. A decision is one statement when it is one write (most
 * often one message, the snapshot unchanged), else one transaction on one connection; nothing but its own
 * statements runs inside it.
 */
export class PostgresRooms implements RoomStore {
  /**
   * Each room's last committed state, to tell whether the next one needs its snapshot written (see snapshot.ts). Only
   * the bridge serving a room commits its decisions, so the state it committed last is the room's.
   */
  private readonly last = new Map<number, RoomState>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: () => number,
  ) {}

  async open(platform: string, channel: string, directAgent?: string): Promise<RoomRecord> {
    let row: ChannelDb | undefined;
    try {
      [row] = await rows<ChannelDb>(this.pool, Q.room, [platform, channel]);
      if (!row) {
        await run(this.pool, Q.insertRoom, [platform, channel, directAgent ?? null, Date.now()]);
        [row] = await rows<ChannelDb>(this.pool, Q.room, [platform, channel]);
      }
    } catch (error) {
      throw writeError(error);
    }
    if (!row) throw new RoundtableError('store', `room ${platform}:${channel} could not be stored`);
    return this.record(row);
  }

  async all(): Promise<RoomRecord[]> {
    return (await rows<ChannelDb>(this.pool, Q.rooms)).map((row) => this.record(row));
  }

  async commit(
    roomId: number,
    all: readonly Write[],
    state: RoomState,
    fence?: Fence,
    stored?: number[],
  ): Promise<CommitResult> {
    const last = this.last.get(roomId);
    const snapshot = last !== undefined && derivable(last, all, state) ? null : JSON.stringify(state);
    // A message's routing record goes on its own row: the commonest decision stays one statement.
    const writes = fold(all);
    const [only, ...rest] = writes;
    try {
      if (fence !== undefined && snapshot === null && rest.length === 0 && oneChunk(only)) {
        // The commonest decision under a lease: one statement that checks the token too.
        if (!only) await this.checkFence(this.pool, roomId, fence);
        else if (!(await this.insertFenced(roomId, only, fence, stored))) {
          await this.checkFence(this.pool, roomId, fence);
          throw DUPLICATE;
        }
      } else if (
        fence === undefined &&
        snapshot === null &&
        rest.length === 0 &&
        !(only?.type === 'message' && only.message.platformIds.length > 1)
      ) {
        // One statement is a transaction already: no BEGIN/COMMIT round trips for the commonest decision.
        if (only) await this.apply(this.pool, roomId, only, stored);
      } else {
        await transaction(this.pool, async (tx) => {
          if (fence) await this.checkFence(tx, roomId, fence);
          for (const write of writes) await this.apply(tx, roomId, write, stored);
          if (snapshot !== null && (await run(tx, Q.setState, [snapshot, roomId])) === 0) {
            throw new RoundtableError('store', `room ${roomId} is not stored: its decision cannot be`);
          }
        });
      }
    } catch (error) {
      if (error === DUPLICATE) return 'duplicate';
      throw writeError(error);
    }
    this.last.set(roomId, state);
    return 'done';
  }

  async history(roomId: number, limit: number): Promise<RoomMessage[]> {
    return (await rows<MessageDb>(this.pool, Q.history, [roomId, limit])).map(toMessage);
  }

  async keepTokens(counts: ReadonlyArray<{ id: number; tokens: MessageTokens }>): Promise<void> {
    if (counts.length === 0) return;
    try {
      await run(this.pool, Q.setTokens, [
        counts.map((c) => c.id),
        counts.map((c) => c.tokens.o200k_base ?? null),
        counts.map((c) => c.tokens.cl100k_base ?? null),
      ]);
    } catch (error) {
      throw writeError(error);
    }
  }

  async transcript(roomId: number, page: { before?: number | undefined; limit: number }): Promise<TranscriptRow[]> {
    const found =
      page.before === undefined
        ? await rows<TranscriptDb>(this.pool, Q.newestPage, [roomId, page.limit])
        : await rows<TranscriptDb>(this.pool, Q.olderPage, [roomId, page.before, page.limit]);
    return found.map(toTranscript);
  }

  async decisions(roomId: number, from: number, to: number): Promise<DecisionRow[]> {
    return (await rows<{ seq: number; record: string; at: number }>(this.pool, Q.decisions, [roomId, from, to])).map(
      toDecision,
    );
  }

  async byPlatformId(roomId: number, platformId: string): Promise<RoomMessage | undefined> {
    const [row] = await rows<MessageDb>(this.pool, Q.byPlatformId, [roomId, platformId]);
    return row ? toMessage(row) : undefined;
  }

  async seen(roomId: number, platformId: string): Promise<boolean> {
    return (await rows(this.pool, Q.seen, [roomId, platformId])).length > 0;
  }

  async addressedBy(roomId: number, platformId: string): Promise<string[] | undefined> {
    const prefix = `${platformId}:edit:`;
    // `;` follows `:`: the range holds exactly the ids that start with the prefix (and uses the unique index).
    const found = await rows<{ mentions: string }>(this.pool, Q.addressedBy, [
      roomId,
      platformId,
      prefix,
      `${platformId}:edit;`,
    ]);
    if (found.length === 0) return undefined;
    return [...new Set(found.flatMap((row) => JSON.parse(row.mentions) as string[]))];
  }

  async clear(roomId: number): Promise<void> {
    await transaction(this.pool, async (tx) => {
      await run(tx, Q.keepDerived, [roomId]);
      await run(tx, Q.keepIds, [roomId]);
      await run(tx, Q.clear, [roomId]);
    });
  }

  async lastPlatformMessageId(platform: string, channel: string): Promise<string | undefined> {
    const [row] = await rows<{ platform_message_id: string }>(this.pool, Q.lastRef, [platform, channel]);
    return row?.platform_message_id;
  }

  async caughtUp(platform: string, channel: string): Promise<string | undefined> {
    const [row] = await rows<{ caught_up: string | null }>(this.pool, Q.caughtUp, [platform, channel]);
    return row?.caught_up ?? undefined;
  }

  async setCaughtUp(platform: string, channel: string, platformId: string): Promise<void> {
    await run(this.pool, Q.setCaughtUp, [platformId, platform, channel]);
  }

  async active(platform: string): Promise<Array<{ channel: string; agent?: string }>> {
    const found = await rows<{ channel: string; direct_agent: string | null }>(this.pool, Q.active, [platform]);
    return found.map((r) => ({ channel: r.channel, ...(r.direct_agent ? { agent: r.direct_agent } : {}) }));
  }

  async requests(room?: string): Promise<RequestRow[]> {
    const found =
      room === undefined
        ? await rows<RequestDb>(this.pool, Q.requests)
        : await rows<RequestDb>(this.pool, Q.requestsOf, [room]);
    return found.map(toRequest);
  }

  async notes(): Promise<NoteRecord[]> {
    const found = await rows<{ id: string; room: string; note: string }>(this.pool, Q.notes);
    return found.map((row) => ({ id: row.id, room: row.room, note: JSON.parse(row.note) as Note }));
  }

  async maxRequestId(): Promise<number> {
    const [row] = await rows<{ id: number }>(this.pool, Q.maxRequestId);
    return row?.id ?? 0;
  }

  /** Throws LeaseLostError unless `fence` is the room's live lease (and holds it until the transaction ends). */
  private async checkFence(sql: Sql, roomId: number, fence: Fence): Promise<void> {
    if ((await rows(sql, Q.fence, [roomId, fence.token])).length === 0) throw new LeaseLostError(roomId, fence.token);
  }

  /** Stores a one-chunk message under the lease `fence` names; false when it was not (a duplicate or a stale token). */
  private async insertFenced(
    roomId: number,
    write: MessageWrite | RoutedMessage,
    fence: Fence,
    stored: number[] | undefined,
  ): Promise<boolean> {
    const { message } = write;
    const [first = null] = message.platformIds;
    const values = [roomId, first, ...messageValues(message), ...routedValues(write), fence.token];
    const [row] = await rows<{ id: number }>(this.pool, Q.insertMessageFenced, values);
    if (row) stored?.push(row.id);
    return row !== undefined;
  }

  /** One write of a decision. A message with further chunk ids takes several statements (inside a transaction). */
  private async apply(
    sql: Sql,
    roomId: number,
    write: Write | RoutedMessage,
    stored: number[] | undefined,
  ): Promise<void> {
    switch (write.type) {
      case 'message': {
        const [first = null, ...more] = write.message.platformIds;
        if (more.length > 0 && (await rows(sql, Q.anySeen, [roomId, more])).length > 0) throw DUPLICATE;
        const [row] = await rows<{ id: number }>(sql, Q.insertMessage, [
          roomId,
          first,
          ...messageValues(write.message),
          ...routedValues(write),
        ]);
        if (!row) throw DUPLICATE;
        stored?.push(row.id);
        if (more.length > 0) await run(sql, Q.insertRefs, [roomId, more, row.id]);
        return;
      }
      case 'request':
        await run(sql, Q.upsertRequest, requestValues(write.request));
        return;
      case 'request-status':
        await run(sql, Q.requestStatus, [write.status, write.id]);
        return;
      case 'chat-request':
        await run(sql, UPSERT_CHAT, chatValues(write.request));
        return;
      case 'note':
        await run(sql, Q.insertNote, [write.id, write.room, JSON.stringify(write.note), this.clock()]);
        return;
      case 'note-done':
        // Taken already (it reached the room twice: as it was written, and from the store): nothing of this is stored.
        if ((await run(sql, Q.deleteNote, [write.id])) === 0) throw DUPLICATE;
        return;
      case 'privacy':
        await run(sql, Q.setPrivacy, [write.mode, roomId]);
        return;
      case 'decision':
        await run(sql, Q.insertDecision, [
          roomId,
          write.seq,
          write.record.kind,
          JSON.stringify(write.record),
          write.at,
        ]);
        return;
    }
  }

  /** A room's row as the port gives it, its state raised to what its messages say (and remembered as committed). */
  private record(row: ChannelDb): RoomRecord {
    const key = `${row.platform}:${row.channel}`;
    let state: RoomState | null = null;
    if (row.state !== null) {
      state = withDerived(parseState(key, row.state), {
        seq: row.newest_seq ?? 0,
        lastHuman: row.newest_human ?? 0,
      });
      this.last.set(row.id, state);
    }
    return { id: row.id, platform: row.platform, channel: row.channel, key, directAgent: row.direct_agent, state };
  }
}

/** The routing record a message is stored with (its row's `routed`, `routed_at`), or none. */
function routedValues(write: MessageWrite | RoutedMessage): Array<string | number | null> {
  const routed = 'routed' in write ? write.routed : undefined;
  return [routed ? JSON.stringify(routed.record) : null, routed?.at ?? null];
}

/** No write, or a message stored in one statement (one platform id at most). */
function oneChunk(write: Write | RoutedMessage | undefined): write is MessageWrite | RoutedMessage | undefined {
  return write === undefined || (write.type === 'message' && write.message.platformIds.length <= 1);
}

function parseState(key: string, text: string): RoomState {
  try {
    return JSON.parse(text) as RoomState;
  } catch (error) {
    throw new RoundtableError('store', `room ${key}: its stored state (channels.state) is not valid JSON`, {
      cause: error,
    });
  }
}
