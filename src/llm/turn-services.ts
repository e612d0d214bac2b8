import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import type { ToolRun } from '../room/types.js';
import type { StorePort } from '../store/index.js';
import { createOpenAiClient } from './client.js';
import type { Recall } from './context.js';
import { createEmbedder, type Embedder, type EmbedMeter } from './embeddings.js';
import { widestBlock } from './history-window.js';
import { createRecall, type EndpointHealth } from './recall.js';
import { BlockSummaries } from './summaries.js';
import type { RecallRoom, TurnServices } from './turn-context.js';
import type { CallMeter } from './types.js';

/** Embeddings calls are small: a slow endpoint should cost a turn little before it is given up on. */
const EMBEDDINGS_TIMEOUT_S = 15;

/** How an action is logged: the tool and what it was given, and whether it went wrong. */
function actionText(run: ToolRun): string {
  const what = `${run.tool}: ${run.input}`.replace(/\s+/g, ' ').slice(0, 160);
  return run.output.startsWith('[ERROR') ? `${what} (failed: ${run.output.slice(8, 80).replace(/\]$/, '')})` : what;
}

/**
 * The store-backed token economy for the agent runner: usage per agent and room, each agent's knowledge and
 * recent actions (by the place they come from, shown only where it may be), retrieval of older messages (from the
 * turn's own room: what the agent may see there). Bookkeeping never fails a turn: a store error is logged.
 */
/** The bridge's embeddings model (EMBEDDINGS_MODEL at EMBEDDINGS_BASE_URL); none when it is not set. */
export function embedderFor(settings: Config['settings']): Embedder | undefined {
  const model = settings.EMBEDDINGS_MODEL;
  return model
    ? createEmbedder({
        baseURL: settings.EMBEDDINGS_BASE_URL ?? settings.OPENAI_BASE_URL,
        apiKey: settings.OPENAI_API_KEY,
        model,
        timeoutMs: Math.min(settings.LLM_TIMEOUT_S, EMBEDDINGS_TIMEOUT_S) * 1000,
        batch: settings.EMBEDDINGS_BATCH,
      })
    : undefined;
}

export function storeServices(
  store: Pick<StorePort, 'usage' | 'actions' | 'knowledge' | 'embeddings' | 'summaries'>,
  config: Config,
  log: Logger,
  clock: () => number = Date.now,
  /** Spending limits on a room's embeddings calls (none: they are not held). */
  embedMeter?: (room: string, model: string) => EmbedMeter | undefined,
  embedder: Embedder | undefined = embedderFor(config.settings),
  /** Spending limits on a room's summary calls (none: they are not held). */
  summaryMeter?: (room: string) => CallMeter | undefined,
): TurnServices {
  const settings = config.settings;
  // One for the bridge: a failing endpoint is logged once, not once per room.
  const health: EndpointHealth = { failing: false };
  const recallIn = (room: RecallRoom, viewers: readonly string[]): Recall | undefined =>
    embedder
      ? createRecall({
          embedder,
          vectors: store.embeddings,
          roomId: room.id,
          viewers,
          log,
          meter: embedMeter?.(room.key, embedder.model),
          health,
        })
      : undefined;
  // SUMMARY_MODEL: summaries of older history, on the agents' endpoint (OPENAI_BASE_URL).
  const summaryModel = settings.SUMMARY_MODEL;
  const summaries = summaryModel
    ? new BlockSummaries({
        store: store.summaries,
        client: createOpenAiClient({
          baseURL: settings.OPENAI_BASE_URL,
          apiKey: settings.OPENAI_API_KEY,
          timeoutMs: settings.LLM_TIMEOUT_S * 1000,
          maxRetries: settings.LLM_MAX_RETRIES,
          stream: false,
          agent: 'summaries',
        }),
        model: summaryModel,
        width: widestBlock(settings.HISTORY_LIMIT),
        meter: summaryMeter,
        log,
        clock,
      })
    : undefined;
  return {
    async recordUsage(agent, roomKey, usage) {
      try {
        await store.usage.add(agent, roomKey, usage);
      } catch (error) {
        // Bookkeeping never fails a turn.
        log.warn({ err: error, agent, room: roomKey }, 'could not record token usage');
      }
    },
    async recordAction(agent, place, run) {
      try {
        await store.actions.add(agent, place, actionText(run), clock());
      } catch (error) {
        log.warn({ err: error, agent, room: place.room }, 'could not record an action');
      }
    },
    knowledge: (agent, here) => store.knowledge.list(agent, here),
    recentActions: (agent, here) => store.actions.recent(agent, here),
    memoryFor: (agent, place) => ({
      has: (key) => store.knowledge.has(agent, place, key),
      count: () => store.knowledge.count(agent, place.room),
      remember: (key, value) => store.knowledge.set(agent, place, key, value, clock()),
      forget: (key) => store.knowledge.delete(agent, place, key),
    }),
    ...(embedder ? { recall: recallIn } : {}),
    ...(summaries ? { summaries: (room: string) => summaries.source(room) } : {}),
  };
}
