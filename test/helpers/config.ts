import type { AgentConfig, Allocations, Config, Price, ToolName } from '../../src/config/index.js';
import { DEFAULT_ALLOCATIONS, readSettings } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';

export interface TestAgent {
  name: string;
  model?: string;
  activation?: 'always' | 'mention';
  tools?: ToolName[];
  systemPrompt?: string;
  endpoint?: string;
  prompts?: AgentConfig['prompts'];
  contextTokens?: number;
  allocations?: Allocations;
  price?: Price;
  spendLimitUsdDay?: number;
  maxOutputTokens?: number;
  discord?: AgentConfig['discord'];
  slack?: AgentConfig['slack'];
  access?: AgentConfig['access'];
  approvals?: AgentConfig['approvals'];
  mcp?: AgentConfig['mcp'];
}

/** A validated Config without agent files: settings from `env`, agents in the given order. */
export function testConfig(options: { agents: TestAgent[]; env?: Record<string, string> }): Config {
  // Tests DM the agents freely unless they test pairing (DM_POLICY=pair, the default for a real install).
  const settings = readSettings({ DATA_DIR: ':memory:', DM_POLICY: 'allow', ...options.env });
  const agents: AgentConfig[] = options.agents.map((agent) => ({
    name: agent.name,
    file: `agents/${agent.name}.md`,
    model: agent.model ?? agent.name,
    endpoint: agent.endpoint ?? settings.OPENAI_BASE_URL,
    apiKey: 'test-key',
    activation: agent.activation ?? 'mention',
    tools: agent.tools ?? [],
    temperature: undefined,
    systemPrompt: agent.systemPrompt ?? `You are ${agent.name}.`,
    prompts: agent.prompts ?? {},
    contextTokens: agent.contextTokens ?? settings.MODEL_CONTEXT_TOKENS,
    allocations: agent.allocations ?? DEFAULT_ALLOCATIONS,
    ...(agent.price ? { price: agent.price } : {}),
    ...(agent.spendLimitUsdDay !== undefined ? { spendLimitUsdDay: agent.spendLimitUsdDay } : {}),
    maxOutputTokens: agent.maxOutputTokens ?? Math.max(1, settings.ANSWER_RESERVE_TOKENS),
    ...(agent.discord ? { discord: agent.discord } : {}),
    ...(agent.slack ? { slack: agent.slack } : {}),
    ...(agent.access ? { access: agent.access } : {}),
    ...(agent.approvals ? { approvals: agent.approvals } : {}),
    ...(agent.mcp ? { mcp: agent.mcp } : {}),
  }));
  return { settings, agents, secrets: [] };
}

/** The ConfigError `fn` throws (any other error is thrown on; none at all fails the test). */
export function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
