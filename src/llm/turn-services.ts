import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import type { ToolRun } from '../room/types.js';
import type { StorePort } from '../store/index.js';
import { createOpenAiClient } from './client.js';
import type { Recall } from './context.js';
import { createEmbedder, type EmbedMeter } from './embeddings.js';
import { widestBlock } from './history-window.js';
import { createRecall } from './recall.js';
import { BlockSummaries } from './summaries.js';
import type { TurnServices } from './turn-context.js';
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
 * recent actions, retrieval of older messages. Bookkeeping never fails a turn: a store error is logged.
 */
export function storeServices(
  store: Pick<StorePort, 'usage' | 'actions' | 'knowledge' | 'embeddings' | 'summaries'>,
  config: Config,
  log: Logger,
  clock: () => number = Date.now,
  /** Spending limits on a room's embeddings calls (none: they are not held). */
  embedMeter?: (room: string, model: string) => EmbedMeter | undefined,
  /** Spending limits on a room's summary calls (none: they are not held). */
  summaryMeter?: (room: string) => CallMeter | undefined,
): TurnServices {
  const settings = config.settings;
  const model = settings.EMBEDDINGS_MODEL;
  const embedder = model
    ? createEmbedder({
        baseURL: settings.EMBEDDINGS_BASE_URL ?? settings.OPENAI_BASE_URL,
        apiKey: settings.OPENAI_API_KEY,
        model,
        timeoutMs: Math.min(settings.LLM_TIMEOUT_S, EMBEDDINGS_TIMEOUT_S) * 1000,
      })
    : undefined;
  // One per room: each room's calls are held against that room's spending limit.
  const recalls = new Map<string, Recall>();
  const recallIn = (room: string): Recall | undefined => {
    if (!embedder) return undefined;
    let recall = recalls.get(room);
    if (!recall) {
      recall = createRecall(embedder, store.embeddings, log, embedMeter?.(room, embedder.model));
      recalls.set(room, recall);
    }
    return recall;
  };
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
    async recordAction(agent, roomKey, run) {
      try {
        await store.actions.add(agent, roomKey, actionText(run), clock());
      } catch (error) {
        log.warn({ err: error, agent, room: roomKey }, 'could not record an action');
      }
    },
    knowledge: (agent) => store.knowledge.list(agent),
    recentActions: (agent) => store.actions.recent(agent),
    memoryFor: (agent) => ({
      has: (key) => store.knowledge.has(agent, key),
      count: () => store.knowledge.count(agent),
      remember: (key, value) => store.knowledge.set(agent, key, value, clock()),
      forget: (key) => store.knowledge.delete(agent, key),
    }),
    ...(embedder ? { recall: recallIn } : {}),
    ...(summaries ? { summaries: (room: string) => summaries.source(room) } : {}),
  };
}
