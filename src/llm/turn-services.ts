import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/index.js';
import { createEmbedder } from './embeddings.js';
import { createRecall } from './recall.js';
import type { TurnServices } from './turn-context.js';

/** Embeddings calls are small: a slow endpoint should cost a turn little before it is given up on. */
const EMBEDDINGS_TIMEOUT_S = 15;

/** The store-backed token economy for the agent runner: usage per agent and room, retrieval of older messages. */
export function storeServices(store: Store, config: Config, log: Logger): TurnServices {
  const settings = config.settings;
  const recall = settings.EMBEDDINGS_MODEL
    ? createRecall(
        createEmbedder({
          baseURL: settings.EMBEDDINGS_BASE_URL ?? settings.OPENAI_BASE_URL,
          apiKey: settings.OPENAI_API_KEY,
          model: settings.EMBEDDINGS_MODEL,
          timeoutMs: Math.min(settings.LLM_TIMEOUT_S, EMBEDDINGS_TIMEOUT_S) * 1000,
        }),
        store.embeddings,
        log,
      )
    : undefined;
  return {
    recordUsage(agent, roomKey, usage) {
      try {
        store.usage.add(agent, roomKey, usage);
      } catch (error) {
        // Bookkeeping never fails a turn.
        log.warn({ err: error, agent, room: roomKey }, 'could not record token usage');
      }
    },
    ...(recall ? { recall: () => recall } : {}),
  };
}
