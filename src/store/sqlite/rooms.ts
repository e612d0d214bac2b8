import type Database from 'better-sqlite3';
import { RoundtableError } from '../../errors.js';
import type { RequestRow, Write } from '../../room/effects.js';
import type { Note } from '../../room/events.js';
import type { RoomState } from '../../room/state.js';
import type { MessageTokens, RoomMessage } from '../../room/types.js';
import type { CommitResult, DecisionRow, Fence, NoteRecord, RoomRecord, RoomStore, TranscriptRow } from '../port.js';
import { type Derived, derivable, withDerived } from '../snapshot.js';
import { upsertChat } from './chats.js';
import {
  fold,
  INSERT_MESSAGE,
  MESSAGE_COLUMNS,
  type MessageDb,
  messageValues,
  type RequestDb,
  type RoutedMessage,
  requestValues,
  SET_TOKENS,
  TRANSCRIPT_COLUMNS,
  type TranscriptDb,
  toDecision,
  toMessage,
  toRequest,
  toTranscript,
  UPSERT_REQUEST,
} from './rows.js';
import { writeError } from './write-errors.js';

interface ChannelDb {
  id: number;
  platform: string;
  channel: string;
  direct_agent: string | null;
  state: string | null;
}

/** Thrown inside a commit's transaction to roll it back: a platform id it stores is stored already. */
const DUPLICATE = Symbol('duplicate');

/**
 * Rooms, their messages and their decisions in SQLite. Every method is one statement or one transaction
 * (better-sqlite3 is synchronous: nothing else runs in between).
 */
export class SqliteRooms implements RoomStore {
  /**
   * Each room's last committed state, to tell whether the next one needs its snapshot written (see snapshot.ts).
   * Kept by reference: a room's states are values, never changed once decided.
   */
  private readonly last = new Map<number, RoomState>();
  private readonly q;
  private readonly apply: (
    roomId: number,
    writes: readonly Write[],
    snapshot: string | null,
    stored?: number[],
  ) => void;
  private readonly forget: (roomId: number) => void;
  private readonly setTokens: (counts: ReadonlyArray<{ id: number; tokens: MessageTokens }>) => void;

  constructor(db: Database.Database, clock: () => number) {
    const q = {
      room: db.prepare<[string, string], ChannelDb>(
        'SELECT id, platform, channel, direct_agent, state FROM channels WHERE platform = ? AND channel = ?',
      ),
      rooms: db.prepare<[], ChannelDb>('SELECT id, platform, channel, direct_agent, state FROM channels ORDER BY id'),
      insertRoom: db.prepare(
        'INSERT INTO channels (platform, channel, direct_agent, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      // Seq grows with the row id within a room: both walk the (channel, id) index down from the newest message.
      newestSeq: db.prepare<[number], { seq: number | null }>(
        'SELECT seq FROM messages WHERE channel_id = ? AND seq IS NOT NULL ORDER BY id DESC LIMIT 1',
      ),
      newestHumanSeq: db.prepare<[number], { seq: number }>(
        `SELECT seq FROM messages WHERE channel_id = ? AND seq IS NOT NULL AND kind = 'human'
         ORDER BY id DESC LIMIT 1`,
      ),
      insertMessage: db.prepare(INSERT_MESSAGE),
      setTokens: db.prepare(SET_TOKENS),
      refExists: db.prepare<[number, string, number, string], { one: number }>(
        `SELECT 1 AS one FROM messages WHERE channel_id = ? AND platform_message_id = ?
         UNION ALL SELECT 1 FROM message_refs WHERE channel_id = ? AND platform_message_id = ? LIMIT 1`,
      ),
      insertRef: db.prepare(
        'INSERT INTO message_refs (channel_id, platform_message_id, message_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      setState: db.prepare('UPDATE channels SET state = ? WHERE id = ?'),
      setPrivacy: db.prepare('UPDATE channels SET privacy = ? WHERE id = ?'),
      upsertRequest: db.prepare(UPSERT_REQUEST),
      requestStatus: db.prepare('UPDATE requests SET status = ? WHERE id = ?'),
      insertNote: db.prepare(
        'INSERT INTO notes (id, room, note, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      deleteNote: db.prepare('DELETE FROM notes WHERE id = ?'),
      insertDecision: db.prepare('INSERT INTO decisions (room_id, seq, kind, record, at) VALUES (?, ?, ?, ?, ?)'),
      // A message's routing is kept on its row (see \`fold\`), the other records in \`decisions\`.
      decisions: db.prepare<
        [number, number, number, number, number, number],
        { seq: number; record: string; at: number }
      >(
        `SELECT seq, record, at FROM (
           SELECT seq, routed AS record, routed_at AS at, 0 AS source, id FROM messages
           WHERE channel_id = ? AND seq BETWEEN ? AND ? AND routed IS NOT NULL
           UNION ALL
           SELECT seq, record, at, 1 AS source, id FROM decisions WHERE room_id = ? AND seq BETWEEN ? AND ?)
         ORDER BY seq, source, id`,
      ),
      newestPage: db.prepare<[number, number], TranscriptDb>(
        `SELECT * FROM (SELECT ${TRANSCRIPT_COLUMNS} FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT ?)
         ORDER BY id`,
      ),
      olderPage: db.prepare<[number, number, number], TranscriptDb>(
        `SELECT * FROM (SELECT ${TRANSCRIPT_COLUMNS} FROM messages WHERE channel_id = ? AND id < ?
         ORDER BY id DESC LIMIT ?) ORDER BY id`,
      ),
      notes: db.prepare<[], { id: string; room: string; note: string }>(
        'SELECT id, room, note FROM notes ORDER BY rowid',
      ),
      requests: db.prepare<[], RequestDb>('SELECT * FROM requests ORDER BY id'),
      requestsOf: db.prepare<[string, string], RequestDb>(
        'SELECT * FROM requests WHERE origin = ? OR target = ? ORDER BY id',
      ),
      maxRequestId: db.prepare<[], { id: number }>('SELECT coalesce(max(id), 0) AS id FROM requests'),
      history: db.prepare<[number, number], MessageDb>(
        `SELECT * FROM (SELECT ${MESSAGE_COLUMNS} FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT ?)
         ORDER BY id`,
      ),
      byPlatformId: db.prepare<[number, string, number, string], MessageDb>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages
         WHERE channel_id = ? AND (platform_message_id = ? OR id = (SELECT message_id FROM message_refs
           WHERE channel_id = ? AND platform_message_id = ?))`,
      ),
      addressedBy: db.prepare<[number, string, string, string], { mentions: string }>(
        `SELECT mentions FROM messages WHERE channel_id = ?
         AND (platform_message_id = ? OR (platform_message_id >= ? AND platform_message_id < ?))`,
      ),
      // Before /clear deletes the messages, the snapshot takes the seq and lastHuman they told.
      keepDerived: db.prepare(
        `UPDATE channels SET state = json_set(state,
           '$.seq', max(json_extract(state, '$.seq'), coalesce(
             (SELECT max(seq) FROM messages WHERE channel_id = :room AND seq IS NOT NULL), 0)),
           '$.lastHuman', max(json_extract(state, '$.lastHuman'), coalesce(
             (SELECT seq FROM messages WHERE channel_id = :room AND seq IS NOT NULL AND kind = 'human'
              ORDER BY seq DESC LIMIT 1), 0)))
         WHERE id = :room AND state IS NOT NULL`,
      ),
      keepIds: db.prepare(
        `INSERT INTO message_refs (channel_id, platform_message_id, message_id)
         SELECT channel_id, platform_message_id, NULL FROM messages
         WHERE channel_id = ? AND platform_message_id IS NOT NULL ON CONFLICT DO NOTHING`,
      ),
      clear: db.prepare('DELETE FROM messages WHERE channel_id = ?'),
      // An edit stored as a message of its own has an id of its own (`<id>:edit:…`), not one of the platform's.
      lastRef: db.prepare<[string, string], { platform_message_id: string }>(
        `SELECT m.platform_message_id FROM messages m JOIN channels c ON c.id = m.channel_id
         WHERE c.platform = ? AND c.channel = ? AND m.platform_message_id IS NOT NULL
           AND m.platform_message_id NOT LIKE '%:edit:%' ORDER BY m.id DESC LIMIT 1`,
      ),
      caughtUp: db.prepare<[string, string], { caught_up: string | null }>(
        'SELECT caught_up FROM channels WHERE platform = ? AND channel = ?',
      ),
      setCaughtUp: db.prepare('UPDATE channels SET caught_up = ? WHERE platform = ? AND channel = ?'),
      active: db.prepare<[string], { channel: string; direct_agent: string | null }>(
        `SELECT c.channel, c.direct_agent FROM channels c LEFT JOIN messages m ON m.channel_id = c.id
         WHERE c.platform = ? GROUP BY c.id ORDER BY max(m.id) DESC NULLS LAST, c.id DESC`,
      ),
    };
    this.q = q;

    const seen = (roomId: number, platformId: string) =>
      q.refExists.get(roomId, platformId, roomId, platformId) !== undefined;

    /** One write: one statement, except a message with further chunk ids (run inside a transaction). */
    const applyWrite = (roomId: number, write: Write | RoutedMessage, stored: number[] | undefined): void => {
      switch (write.type) {
        case 'message': {
          const [first = null, ...more] = write.message.platformIds;
          if (more.some((id) => seen(roomId, id))) throw DUPLICATE;
          const routed = 'routed' in write ? write.routed : undefined;
          const info = q.insertMessage.run(
            roomId,
            first,
            ...messageValues(write.message),
            routed ? JSON.stringify(routed.record) : null,
            routed?.at ?? null,
            roomId,
            first,
          );
          if (info.changes === 0) throw DUPLICATE;
          stored?.push(Number(info.lastInsertRowid));
          for (const id of more) q.insertRef.run(roomId, id, info.lastInsertRowid);
          return;
        }
        case 'request':
          q.upsertRequest.run(...requestValues(write.request));
          return;
        case 'request-status':
          q.requestStatus.run(write.status, write.id);
          return;
        case 'chat-request':
          upsertChat(db, write.request);
          return;
        case 'note':
          q.insertNote.run(write.id, write.room, JSON.stringify(write.note), clock());
          return;
        case 'note-done':
          // Taken already (it reached the room twice: as it was written, and from the store): nothing of this is stored.
          if (q.deleteNote.run(write.id).changes === 0) throw DUPLICATE;
          return;
        case 'privacy':
          q.setPrivacy.run(write.mode, roomId);
          return;
        case 'decision':
          q.insertDecision.run(roomId, write.seq, write.record.kind, JSON.stringify(write.record), write.at);
          return;
      }
    };
    const inTransaction = db.transaction(
      (roomId: number, writes: ReadonlyArray<Write | RoutedMessage>, snapshot: string | null, stored?: number[]) => {
        for (const write of writes) applyWrite(roomId, write, stored);
        if (snapshot !== null && q.setState.run(snapshot, roomId).changes === 0) {
          throw new RoundtableError('store', `room ${roomId} is not stored: its decision cannot be`);
        }
      },
    );
    this.apply = (roomId, all, snapshot, stored) => {
      const writes = fold(all);
      // A decision that is one statement (most often: one message, the snapshot unchanged) needs no BEGIN/COMMIT
      // of its own: a single statement is a transaction already.
      const [only, ...rest] = writes;
      if (
        snapshot === null &&
        rest.length === 0 &&
        !(only?.type === 'message' && only.message.platformIds.length > 1)
      ) {
        if (only) applyWrite(roomId, only, stored);
        return;
      }
      // BEGIN IMMEDIATE: a transaction that reads before it writes (a message's further ids) takes the write lock
      // first, so another writer makes it wait (busy_timeout); a deferred one would fail at once ("database is
      // locked") when it came to write.
      inTransaction.immediate(roomId, writes, snapshot, stored);
    };
    const setTokens = db.transaction((counts: ReadonlyArray<{ id: number; tokens: MessageTokens }>) => {
      for (const { id, tokens } of counts) {
        q.setTokens.run(tokens.o200k_base ?? null, tokens.cl100k_base ?? null, id);
      }
    });
    this.setTokens = (counts) => setTokens.immediate(counts);

    const forget = db.transaction((roomId: number) => {
      q.keepDerived.run({ room: roomId });
      q.keepIds.run(roomId);
      q.clear.run(roomId);
    });
    this.forget = (roomId) => forget.immediate(roomId);
  }

  async open(platform: string, channel: string, directAgent?: string): Promise<RoomRecord> {
    let row = this.q.room.get(platform, channel);
    if (!row) {
      try {
        this.q.insertRoom.run(platform, channel, directAgent ?? null, Date.now());
      } catch (error) {
        throw writeError(error);
      }
      row = this.q.room.get(platform, channel);
    }
    if (!row) throw new RoundtableError('store', `room ${platform}:${channel} could not be stored`);
    return this.record(row);
  }

  async all(): Promise<RoomRecord[]> {
    return this.q.rooms.all().map((row) => this.record(row));
  }

  async commit(
    roomId: number,
    writes: readonly Write[],
    state: RoomState,
    _fence?: Fence,
    stored?: number[],
  ): Promise<CommitResult> {
    const last = this.last.get(roomId);
    const snapshot = last !== undefined && derivable(last, writes, state) ? null : JSON.stringify(state);
    try {
      this.apply(roomId, writes, snapshot, stored);
    } catch (error) {
      if (error === DUPLICATE) return 'duplicate';
      throw writeError(error);
    }
    this.last.set(roomId, state);
    return 'done';
  }

  async history(roomId: number, limit: number): Promise<RoomMessage[]> {
    return this.q.history.all(roomId, limit).map(toMessage);
  }

  async keepTokens(counts: ReadonlyArray<{ id: number; tokens: MessageTokens }>): Promise<void> {
    if (counts.length === 0) return;
    try {
      this.setTokens(counts);
    } catch (error) {
      throw writeError(error);
    }
  }

  async transcript(roomId: number, page: { before?: number | undefined; limit: number }): Promise<TranscriptRow[]> {
    const rows =
      page.before === undefined
        ? this.q.newestPage.all(roomId, page.limit)
        : this.q.olderPage.all(roomId, page.before, page.limit);
    return rows.map(toTranscript);
  }

  async decisions(roomId: number, from: number, to: number): Promise<DecisionRow[]> {
    return this.q.decisions.all(roomId, from, to, roomId, from, to).map(toDecision);
  }

  async byPlatformId(roomId: number, platformId: string): Promise<RoomMessage | undefined> {
    const row = this.q.byPlatformId.get(roomId, platformId, roomId, platformId);
    return row ? toMessage(row) : undefined;
  }

  async seen(roomId: number, platformId: string): Promise<boolean> {
    return this.q.refExists.get(roomId, platformId, roomId, platformId) !== undefined;
  }

  async addressedBy(roomId: number, platformId: string): Promise<string[] | undefined> {
    const prefix = `${platformId}:edit:`;
    // `;` follows `:`: the range holds exactly the ids that start with the prefix (and uses the unique index).
    const rows = this.q.addressedBy.all(roomId, platformId, prefix, `${platformId}:edit;`);
    if (rows.length === 0) return undefined;
    return [...new Set(rows.flatMap((row) => JSON.parse(row.mentions) as string[]))];
  }

  async clear(roomId: number): Promise<void> {
    this.forget(roomId);
  }

  async lastPlatformMessageId(platform: string, channel: string): Promise<string | undefined> {
    return this.q.lastRef.get(platform, channel)?.platform_message_id;
  }

  async caughtUp(platform: string, channel: string): Promise<string | undefined> {
    return this.q.caughtUp.get(platform, channel)?.caught_up ?? undefined;
  }

  async setCaughtUp(platform: string, channel: string, platformId: string): Promise<void> {
    this.q.setCaughtUp.run(platformId, platform, channel);
  }

  async active(platform: string): Promise<Array<{ channel: string; agent?: string }>> {
    return this.q.active
      .all(platform)
      .map((r) => ({ channel: r.channel, ...(r.direct_agent ? { agent: r.direct_agent } : {}) }));
  }

  async requests(room?: string): Promise<RequestRow[]> {
    const rows = room === undefined ? this.q.requests.all() : this.q.requestsOf.all(room, room);
    return rows.map(toRequest);
  }

  async notes(): Promise<NoteRecord[]> {
    return this.q.notes.all().map((row) => ({ id: row.id, room: row.room, note: JSON.parse(row.note) as Note }));
  }

  async maxRequestId(): Promise<number> {
    return this.q.maxRequestId.get()?.id ?? 0;
  }

  /** A room's row as the port gives it, its state raised to what its messages say (and remembered as committed). */
  private record(row: ChannelDb): RoomRecord {
    const key = `${row.platform}:${row.channel}`;
    let state: RoomState | null = null;
    if (row.state !== null) {
      state = withDerived(parseState(key, row.state), this.derived(row.id));
      this.last.set(row.id, state);
    }
    return { id: row.id, platform: row.platform, channel: row.channel, key, directAgent: row.direct_agent, state };
  }

  private derived(roomId: number): Derived {
    return {
      seq: this.q.newestSeq.get(roomId)?.seq ?? 0,
      lastHuman: this.q.newestHumanSeq.get(roomId)?.seq ?? 0,
    };
  }
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
