import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { RoomMessage } from '../room/types.js';
import type { Recall } from './context.js';
import type { Embedder, EmbedMeter } from './embeddings.js';

/** seed 002: "relevant context via embeddings similarity": this many older messages at most. */
export const RECALLED_MESSAGES = 5;
/** Below this cosine similarity an older message is not worth its tokens. */
const MIN_SIMILARITY = 0.2;

/** Where the vectors are kept (the store's embeddings). */
export interface VectorStore {
  get(ids: readonly number[], model: string): Promise<Map<number, Float32Array>>;
  put(entries: ReadonlyArray<{ id: number; vector: Float32Array }>, model: string): Promise<void>;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Retrieval of older messages: the messages it is offered (those of the agent's visible history that its window
 * left out) and the query are embedded once each (batched; kept in the store), and the few most like the query
 * are returned. A failing endpoint means no retrieval for that turn, never a failed turn; it is logged once until
 * the endpoint answers again.
 */
export function createRecall(embedder: Embedder, vectors: VectorStore, log: Logger, meter?: EmbedMeter): Recall {
  let failing = false;
  return async (candidates, query) => {
    try {
      const wanted = [...candidates, query];
      const known = await vectors.get(
        wanted.map((m) => m.id),
        embedder.model,
      );
      const missing = wanted.filter((m) => !known.has(m.id));
      if (missing.length > 0) {
        const fresh = await embedder.embed(
          missing.map((m) => m.content),
          meter,
        );
        const entries = missing.map((m, i) => ({ id: m.id, vector: fresh[i] ?? new Float32Array() }));
        await vectors.put(entries, embedder.model);
        for (const entry of entries) known.set(entry.id, entry.vector);
      }
      if (failing) log.info({ model: embedder.model }, 'the embeddings endpoint answers again');
      failing = false;
      const target = known.get(query.id);
      if (!target) return [];
      return candidates
        .map((message) => ({ message, score: cosine(target, known.get(message.id) ?? new Float32Array()) }))
        .filter((c) => c.score >= MIN_SIMILARITY)
        .sort((a, b) => b.score - a.score)
        .slice(0, RECALLED_MESSAGES)
        .map((c): RoomMessage => c.message);
    } catch (error) {
      if (!failing) {
        log.warn(
          { model: embedder.model, err: describeError(error) },
          'embeddings failed: no retrieval of older messages',
        );
      }
      failing = true;
      return [];
    }
  };
}
