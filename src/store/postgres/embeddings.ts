import type pg from 'pg';
import type { RoomMessage } from '../../room/types.js';
import type { EmbeddingPort, PendingEmbedding, VectorQuery } from '../port.js';
import { MESSAGE_COLUMNS, type MessageDb, toMessage } from '../sqlite/rows.js';
import { fromBlob, nearest, toBlob } from '../vectors.js';
import { rows, run, statement } from './pool.js';
import { writeError } from './write-errors.js';

const Q = {
  get: statement(
    'embeddings-get',
    'SELECT message_id, vector FROM message_embeddings WHERE message_id = ANY($1::bigint[]) AND model = $2',
  ),
  // Each vector takes its message's room and audience; a message no longer stored is skipped.
  put: statement(
    'embeddings-put',
    `INSERT INTO message_embeddings (message_id, model, vector, room_id, audience)
     SELECT m.id, $3, entry.vector, m.channel_id, m.audience
     FROM unnest($1::bigint[], $2::bytea[]) AS entry (id, vector) JOIN messages m ON m.id = entry.id
     ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector,
       room_id = excluded.room_id, audience = excluded.audience`,
  ),
  pending: statement(
    'embeddings-pending',
    `SELECT m.id AS id, c.platform || ':' || c.channel AS room, m.content AS text
     FROM messages m JOIN channels c ON c.id = m.channel_id
     LEFT JOIN message_embeddings e ON e.message_id = m.id AND e.model = $1
     WHERE m.id > $2 AND m.kind <> 'system' AND e.message_id IS NULL ORDER BY m.id LIMIT $3`,
  ),
  audiences: statement(
    'embeddings-audiences',
    `SELECT DISTINCT audience FROM message_embeddings
     WHERE room_id = $1 AND model = $2 AND audience IS NOT NULL`,
  ),
  // Every visible vector of the room: a scan, scored in the bridge (Debian's Postgres has no vector index).
  scan: statement(
    'embeddings-scan',
    `SELECT message_id AS id, vector FROM message_embeddings
     WHERE room_id = $1 AND model = $2 AND (audience IS NULL OR audience = ANY($3::text[])) AND message_id < $4`,
  ),
  messages: statement('embeddings-messages', `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ANY($1::bigint[])`),
};

/**
 * Embeddings of room messages, as float32 bytes, by message id and model, each with its message's room and audience.
 * A search reads one room's vectors that the caller may see and scores every one of them.
 */
export class PostgresEmbeddings implements EmbeddingPort {
  constructor(private readonly pool: pg.Pool) {}

  /** The stored vectors of these messages for `model`, in the order asked (messages without one are left out). */
  async get(ids: readonly number[], model: string): Promise<Map<number, Float32Array>> {
    const found = new Map<number, Buffer>();
    for (const row of await rows<{ message_id: number; vector: Buffer }>(this.pool, Q.get, [ids, model])) {
      found.set(row.message_id, row.vector);
    }
    const vectors = new Map<number, Float32Array>();
    for (const id of ids) {
      const bytes = found.get(id);
      if (bytes) vectors.set(id, fromBlob(bytes));
    }
    return vectors;
  }

  /** One statement for all; of entries for the same message, the last one counts (as when written one by one). */
  async put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): Promise<void> {
    const last = new Map<number, Float32Array>();
    for (const { id, vector } of entries) last.set(id, vector);
    if (last.size === 0) return;
    try {
      await run(this.pool, Q.put, [[...last.keys()], [...last.values()].map(toBlob), model]);
    } catch (error) {
      throw writeError(error);
    }
  }

  async pending(model: string, after: number, limit: number): Promise<PendingEmbedding[]> {
    return rows<PendingEmbedding>(this.pool, Q.pending, [model, after, limit]);
  }

  async audiences(roomId: number, model: string): Promise<string[][]> {
    const found = await rows<{ audience: string }>(this.pool, Q.audiences, [roomId, model]);
    return found.map((row) => JSON.parse(row.audience) as string[]);
  }

  async search(query: VectorQuery): Promise<Array<{ message: RoomMessage; score: number }>> {
    // Audiences as the messages store them (JSON arrays): the same text matches.
    const audiences = query.audiences.map((names) => JSON.stringify(names));
    const found = await rows<{ id: number; vector: Buffer }>(this.pool, Q.scan, [
      query.roomId,
      query.model,
      audiences,
      query.before,
    ]);
    const best = nearest(found, query.vector, query.limit);
    if (best.length === 0) return [];
    const stored = await rows<MessageDb>(this.pool, Q.messages, [best.map((b) => b.row.id)]);
    const messages = new Map(stored.map((row) => [row.id, toMessage(row)]));
    return best.flatMap(({ row, score }) => {
      const message = messages.get(row.id);
      return message ? [{ message, score }] : [];
    });
  }
}
