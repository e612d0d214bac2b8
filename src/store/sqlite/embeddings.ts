import type Database from 'better-sqlite3';
import type { EmbeddingPort } from '../port.js';

/** Embeddings of room messages, as float32 blobs, by message id and model. */
export class SqliteEmbeddings implements EmbeddingPort {
  private readonly q;
  private readonly putAll;
  constructor(db: Database.Database) {
    this.q = {
      put: db.prepare(
        `INSERT INTO message_embeddings (message_id, model, vector) VALUES (?, ?, ?)
         ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
      ),
      get: db.prepare<[number, string], { vector: Buffer }>(
        'SELECT vector FROM message_embeddings WHERE message_id = ? AND model = ?',
      ),
    };
    this.putAll = db.transaction((entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string) => {
      for (const { id, vector } of entries) {
        this.q.put.run(id, model, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
      }
    });
  }

  /** The stored vectors of these messages for `model` (messages without one are left out). */
  async get(ids: readonly number[], model: string): Promise<Map<number, Float32Array>> {
    const found = new Map<number, Float32Array>();
    for (const id of ids) {
      const row = this.q.get.get(id, model);
      // Copy out of SQLite's buffer: a Float32Array needs 4-byte alignment.
      if (row) found.set(id, new Float32Array(new Uint8Array(row.vector).buffer));
    }
    return found;
  }

  async put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): Promise<void> {
    this.putAll.immediate(entries, model);
  }
}
