/**
 * One client per agent: the OpenAI SDK against the agent's endpoint, with the bridge's timeout, retries and streaming.
 * Tests inject their own factory.
 */
import type { AgentConfig, Config } from '../config/index.js';
import type { Logger } from '../log.js';
import { createOpenAiClient, type LlmClient } from './client.js';

/** Builds an agent's LLM client; tests inject their own. */
export type LlmFactory = (agent: AgentConfig) => LlmClient;

export function defaultLlmFactory(config: Config, log?: Logger): LlmFactory {
  const cache = new Map<string, LlmClient>();
  return (agent) => {
    let client = cache.get(agent.name);
    if (!client) {
      client = createOpenAiClient({
        baseURL: agent.endpoint,
        apiKey: agent.apiKey,
        timeoutMs: config.settings.LLM_TIMEOUT_S * 1000,
        maxRetries: config.settings.LLM_MAX_RETRIES,
        stream: config.settings.LLM_STREAM,
        onRetry: ({ waitMs, error }) =>
          log?.info({ agent: agent.name, waitMs, status: error.status, err: error }, 'model call retried'),
        agent: agent.name,
      });
      cache.set(agent.name, client);
    }
    return client;
  };
}
