/**
 * Whether each agent's fixed part of a request (the bridge's rules, its card with the system prompt, its tool
 * schemas) leaves room in its context: checked at start and by `--check`, since a prompt that does not fit would
 * fail every one of its turns.
 */
import type { AgentConfig, Config } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { toolsFor } from '../tools/registry.js';
import { MIN_FREE_TOKENS } from './budget.js';
import { agentCard, BRIDGE_RULES } from './context.js';
import { countTools, MESSAGE_OVERHEAD, REQUEST_OVERHEAD, tokenCounter } from './tokens.js';

/** The tokens every request of this agent takes before any room message. */
export function fixedTokens(agent: AgentConfig, agentNames: readonly string[]): number {
  const counter = tokenCounter(agent.model);
  const others = agentNames.filter((name) => name.toLowerCase() !== agent.name.toLowerCase());
  const base = `${BRIDGE_RULES}\n\n${agentCard(agent.name, others, agent.systemPrompt)}`;
  const tools = toolsFor(agent.tools).map((tool) => tool.definition);
  return REQUEST_OVERHEAD + MESSAGE_OVERHEAD + counter.count(base) + countTools(counter, tools);
}

/** Throws a ConfigError naming the first agent file whose prompt leaves its context no room for the room. */
export function checkPromptsFit(config: Config): void {
  const names = config.agents.map((agent) => agent.name);
  const reserve = config.settings.ANSWER_RESERVE_TOKENS;
  for (const agent of config.agents) {
    const fixed = fixedTokens(agent, names);
    const left = agent.contextTokens - reserve;
    if (left - fixed >= MIN_FREE_TOKENS) continue;
    throw new ConfigError(
      agent.file,
      'body',
      `the system prompt and the bridge's rules take ${fixed} tokens, and context_tokens (${agent.contextTokens}) ` +
        `less the answer's reserve (${reserve}) leaves ${left} for them and the room: shorten the prompt, or raise ` +
        'context_tokens if the model takes more',
    );
  }
}
