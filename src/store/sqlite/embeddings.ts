import type Database from 'better-sqlite3';
import type { Logger } from '../../log.js';
import type { RoomMessage } from '../../room/types.js';
import type { EmbeddingPort, PendingEmbedding, VectorQuery } from '../port.js';
import { fromBlob, nearest, toBlob } from '../vectors.js';
import { MESSAGE_COLUMNS, type MessageDb, toMessage } from './rows.js';
import { VectorIndex } from './vector-index.js';

/**
 * Embeddings of room messages, as float32 blobs, by message id and model, each with its message's room and
 * audience. A search reads one room's vectors that the caller may see: through the sqlite-vec bit index where it
 * loads (candidates, then scored exactly), else by scoring every one of them.
 */
export class SqliteEmbeddings implements EmbeddingPort {
  private readonly q;
  private readonly putAll;
  /** sqlite-vec's index, when the extension loads on this platform. */
  readonly index: VectorIndex | undefined;

  constructor(db: Database.Database, options: { log?: Logger | undefined; vectorIndex?: boolean } = {}) {
    this.index = options.vectorIndex === false ? undefined : VectorIndex.open(db, options.log);
    this.q = {
      put: db.prepare(
        `INSERT INTO message_embeddings (message_id, model, vector, room_id, audience)
         SELECT id, ?, ?, channel_id, audience FROM messages WHERE id = ?
         ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector,
           room_id = excluded.room_id, audience = excluded.audience`,
      ),
      get: db.prepare<[number, string], { vector: Buffer }>(
        'SELECT vector FROM message_embeddings WHERE message_id = ? AND model = ?',
      ),
      pending: db.prepare<[string, number, number], PendingEmbedding>(
        `SELECT m.id AS id, c.platform || ':' || c.channel AS room, m.content AS text
         FROM messages m JOIN channels c ON c.id = m.channel_id
         LEFT JOIN message_embeddings e ON e.message_id = m.id AND e.model = ?
         WHERE m.id > ? AND m.kind <> 'system' AND e.message_id IS NULL ORDER BY m.id LIMIT ?`,
      ),
      audiences: db.prepare<[number, string], { audience: string }>(
        `SELECT DISTINCT audience FROM message_embeddings
         WHERE room_id = ? AND model = ? AND audience IS NOT NULL`,
      ),
      // Every visible vector of the room (the scan), or the index's candidates among them.
      scan: db.prepare<[number, string, string, number], { id: number; vector: Buffer }>(
        `SELECT message_id AS id, vector FROM message_embeddings
         WHERE room_id = ? AND model = ? AND (audience IS NULL OR audience IN (SELECT value FROM json_each(?)))
         AND message_id < ?`,
      ),
      chosen: db.prepare<[string, number, string, string, number], { id: number; vector: Buffer }>(
        `SELECT message_id AS id, vector FROM message_embeddings
         WHERE message_id IN (SELECT value FROM json_each(?)) AND room_id = ? AND model = ?
         AND (audience IS NULL OR audience IN (SELECT value FROM json_each(?))) AND message_id < ?`,
      ),
      messages: db.prepare<[string], MessageDb>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id IN (SELECT value FROM json_each(?))`,
      ),
    };
    this.putAll = db.transaction((entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string) => {
      for (const { id, vector } of entries) {
        const stored = this.q.put.run(model, toBlob(vector), id).changes > 0;
        if (stored) this.index?.put(id, vector.length);
      }
    });
  }

  /** The stored vectors of these messages for `model` (messages without one are left out). */
  async get(ids: readonly number[], model: string): Promise<Map<number, Float32Array>> {
    const found = new Map<number, Float32Array>();
    for (const id of ids) {
      const row = this.q.get.get(id, model);
      if (row) found.set(id, fromBlob(row.vector));
    }
    return found;
  }

  async put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): Promise<void> {
    this.putAll.immediate(entries, model);
  }

  async pending(model: string, after: number, limit: number): Promise<PendingEmbedding[]> {
    return this.q.pending.all(model, after, limit);
  }

  async audiences(roomId: number, model: string): Promise<string[][]> {
    return this.q.audiences.all(roomId, model).map((row) => JSON.parse(row.audience) as string[]);
  }

  async search(query: VectorQuery): Promise<Array<{ message: RoomMessage; score: number }>> {
    // Audiences as the messages store them (JSON arrays): the same text matches.
    const audiences = JSON.stringify(query.audiences.map((names) => JSON.stringify(names)));
    const candidates = this.index?.candidates({
      roomId: query.roomId,
      vector: query.vector,
      audiences: ['', ...query.audiences.map((names) => JSON.stringify(names))],
      before: query.before,
    });
    const rows =
      candidates === undefined
        ? this.q.scan.iterate(query.roomId, query.model, audiences, query.before)
        : this.q.chosen.all(JSON.stringify(candidates), query.roomId, query.model, audiences, query.before);
    const best = nearest(rows, query.vector, query.limit);
    if (best.length === 0) return [];
    const messages = new Map(
      this.q.messages.all(JSON.stringify(best.map((b) => b.row.id))).map((row) => [row.id, toMessage(row)]),
    );
    return best.flatMap(({ row, score }) => {
      const message = messages.get(row.id);
      return message ? [{ message, score }] : [];
    });
  }
}
