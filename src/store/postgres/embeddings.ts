import type pg from 'pg';
import type { EmbeddingPort } from '../port.js';
import { rows, run, statement } from './pool.js';

const Q = {
  get: statement(
    'embeddings-get',
    'SELECT message_id, vector FROM message_embeddings WHERE message_id = ANY($1::bigint[]) AND model = $2',
  ),
  put: statement(
    'embeddings-put',
    `INSERT INTO message_embeddings (message_id, model, vector)
     SELECT id, $3, vector FROM unnest($1::bigint[], $2::bytea[]) AS entry (id, vector)
     ON CONFLICT (message_id) DO UPDATE SET model = excluded.model, vector = excluded.vector`,
  ),
};

/** Embeddings of room messages, as float32 bytes, by message id and model. */
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
      // Copied out of the driver's buffer: a Float32Array needs 4-byte alignment.
      if (bytes) vectors.set(id, new Float32Array(new Uint8Array(bytes).buffer));
    }
    return vectors;
  }

  /** One statement for all; of entries for the same message, the last one counts (as when written one by one). */
  async put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): Promise<void> {
    const last = new Map<number, Float32Array>();
    for (const { id, vector } of entries) last.set(id, vector);
    if (last.size === 0) return;
    const vectors = [...last.values()].map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength));
    await run(this.pool, Q.put, [[...last.keys()], vectors, model]);
  }
}
