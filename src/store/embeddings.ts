import type Database from 'better-sqlite3';

/** Embeddings of room messages, as float32 blobs, by message id and model. */
export class EmbeddingStore {
  private readonly q;
  constructor(private readonly db: Database.Database) {
    this.q = {
      put: db.prepare(
        `INSERT INTO message_embeddings (message_id, model, vector) VALUES (?, ?, ?)
         ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
      ),
      get: db.prepare<[number, string], { vector: Buffer }>(
        'SELECT vector FROM message_embeddings WHERE message_id = ? AND model = ?',
      ),
    };
  }

  /** The stored vectors of these messages for `model` (messages without one are left out). */
  get(ids: readonly number[], model: string): Map<number, Float32Array> {
    const found = new Map<number, Float32Array>();
    for (const id of ids) {
      const row = this.q.get.get(id, model);
      // Copy out of SQLite's buffer: a Float32Array needs 4-byte alignment.
      if (row) found.set(id, new Float32Array(new Uint8Array(row.vector).buffer));
    }
    return found;
  }

  put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): void {
    this.db.transaction(() => {
      for (const { id, vector } of entries) {
        this.q.put.run(id, model, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
      }
    })();
  }
}
