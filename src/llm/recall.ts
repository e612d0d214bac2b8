import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { canSee } from '../room/privacy.js';
import type { RoomMessage } from '../room/types.js';
import type { EmbeddingPort } from '../store/port.js';
import type { Recall } from './context.js';
import type { Embedder, EmbedMeter } from './embeddings.js';

/** seed 002: "relevant context via embeddings similarity": this many older messages at most. */
export const RECALLED_MESSAGES = 5;
/** Below this cosine similarity an older message is not worth its tokens. */
export const MIN_SIMILARITY = 0.2;

/** Whether an endpoint is failing, shared by a room's recalls, so a failure is logged once until it recovers. */
export interface EndpointHealth {
  failing: boolean;
}

export interface RecallDeps {
  readonly embedder: Embedder;
  readonly vectors: Pick<EmbeddingPort, 'get' | 'put' | 'audiences' | 'search'>;
  /** The room searched (its id in the store). */
  readonly roomId: number;
  /** Who will read what is recalled: a message comes back only when every one of them may see it. */
  readonly viewers: readonly string[];
  readonly log: Logger;
  /** Spending limits on the query's embedding, when it has none yet. */
  readonly meter?: EmbedMeter | undefined;
  readonly health?: EndpointHealth | undefined;
}

/**
 * Retrieval over a room's whole stored history: the query (the newest message) is embedded unless it has its
 * vector already, and the room's vectors the viewers may see are searched for the few most like it among the
 * messages older than the turn's window. Visibility is the history window's own rule (`canSee`, per audience), so
 * recall never shows an agent more than its window would. A failing endpoint or store means no retrieval for
 * that turn, never a failed turn; it is logged once until retrieval works again.
 */
export function createRecall(deps: RecallDeps): Recall {
  const { embedder, vectors, log } = deps;
  const health = deps.health ?? { failing: false };
  const visible = (message: Pick<RoomMessage, 'audience'>) => deps.viewers.every((name) => canSee(name, message));
  return async (query, before) => {
    try {
      let vector = (await vectors.get([query.id], embedder.model)).get(query.id);
      if (!vector) {
        [vector] = await embedder.embed([query.content], deps.meter);
        if (!vector) return [];
        await vectors.put([{ id: query.id, vector }], embedder.model);
      }
      const audiences = (await vectors.audiences(deps.roomId, embedder.model)).filter((audience) =>
        visible({ audience }),
      );
      const found = await vectors.search({
        roomId: deps.roomId,
        model: embedder.model,
        vector,
        audiences,
        before,
        limit: RECALLED_MESSAGES,
      });
      if (health.failing) log.info({ model: embedder.model }, 'the embeddings endpoint answers again');
      health.failing = false;
      return found
        .filter((f) => f.score >= MIN_SIMILARITY && visible(f.message) && f.message.id !== query.id)
        .map((f) => f.message);
    } catch (error) {
      if (!health.failing) {
        log.warn(
          { model: embedder.model, err: describeError(error) },
          'embeddings failed: no retrieval of older messages',
        );
      }
      health.failing = true;
      return [];
    }
  };
}
