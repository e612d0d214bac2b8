import type { AgentConfig, Config } from '../config/index.js';
import { runAgentTurn, type TurnOutput } from '../llm/agent-turn.js';
import { createOpenAiClient, type LlmClient } from '../llm/client.js';
import { stripSpeakerPrefix } from '../llm/context.js';
import { type TurnServices, turnContext } from '../llm/turn-context.js';
import type { CallMeter } from '../llm/types.js';
import type { Logger } from '../log.js';
import type { ChatAdapter, Sandbox } from '../ports.js';
import type { Place } from '../room/privacy.js';
import type { RoomMessage } from '../room/types.js';
import { toolsFor } from '../tools/registry.js';
import type { Messaging, Tool } from '../tools/tool.js';

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

export interface AgentRunRequest {
  readonly agent: AgentConfig;
  readonly channel: string;
  readonly channelKey: string;
  /** The turn's room and its exchange's audience: what its memory may show, and where its actions are recorded. */
  readonly place: Place;
  /** The room's id in the store. */
  readonly roomId: number;
  readonly history: readonly RoomMessage[];
  readonly situation?: string | undefined;
  readonly signal: AbortSignal;
  readonly messaging?: Messaging | undefined;
  /** Each round's text so far, while it streams in. */
  readonly onText?: ((textSoFar: string) => void) | undefined;
  /** Debug lines for model calls and tool runs. */
  readonly log?: Logger | undefined;
  /** Wraps the agent's tools (the turn's journal of tool runs). */
  readonly wrapTools?: ((tools: readonly Tool[]) => readonly Tool[]) | undefined;
  /** Spending limits on the turn's calls. */
  readonly meter?: CallMeter | undefined;
}

const TYPING_EVERY_MS = 8000;

/** Runs one agent's turn: context, tool loop, typing indicator, tool-run display. */
export class AgentRunner {
  constructor(
    private readonly config: Config,
    private readonly llm: LlmFactory,
    private readonly sandbox: Sandbox,
    /** Memory, retrieval and usage bookkeeping (absent: none). */
    private readonly services?: TurnServices,
  ) {}

  async run(adapter: ChatAdapter, request: AgentRunRequest): Promise<TurnOutput> {
    const { agent, channel, signal } = request;
    const showTyping = () => void adapter.typing?.(channel, agent.name)?.catch(() => {});
    showTyping();
    const typing = setInterval(showTyping, TYPING_EVERY_MS);
    typing.unref();
    try {
      const tools = request.wrapTools ? request.wrapTools(toolsFor(agent.tools)) : toolsFor(agent.tools);
      const output = await runAgentTurn({
        client: this.llm(agent),
        model: agent.model,
        temperature: agent.temperature,
        ...(await turnContext({
          agent,
          agentNames: this.config.agents.map((a) => a.name),
          place: request.place,
          roomId: request.roomId,
          history: request.history,
          situation: request.situation,
          tools,
          settings: this.config.settings,
          sources: this.services,
        })),
        tools,
        toolContext: {
          agent: agent.name,
          channelKey: request.channelKey,
          sandbox: this.sandbox,
          commandTimeoutMs: this.config.settings.SANDBOX_TIMEOUT_S * 1000,
          signal,
          messaging: request.messaging,
          memory: this.services?.memoryFor?.(agent.name, request.place),
        },
        maxRounds: this.config.settings.MAX_TOOL_ROUNDS,
        onToolRun: (run) => {
          adapter.toolRun?.(channel, agent.name, run.input, run.output, run.tool);
          this.services?.recordAction?.(agent.name, request.place, run);
        },
        onUsage: (usage) => this.services?.recordUsage?.(agent.name, request.channelKey, usage),
        onText: request.onText,
        log: request.log,
        maxOutputTokens: agent.maxOutputTokens,
        meter: request.meter,
      });
      return { ...output, text: stripSpeakerPrefix(agent.name, output.text) };
    } finally {
      clearInterval(typing);
    }
  }
}
