import type { AgentConfig, Settings } from '../config/index.js';
import type { RoomMessage, ToolRun } from '../room/types.js';
import type { AgentMemory, Tool } from '../tools/tool.js';
import { requestLimit } from './budget.js';
import type { ChatCompletionMessageParam, LlmUsage } from './client.js';
import { type ActionEntry, buildContext, type KnowledgeEntry, type Recall, type SummarySource } from './context.js';
import { tokenCounter } from './tokens.js';
import { TurnBudget } from './turn-budget.js';

/** What an agent's context draws on beside the room: its memory and the room's older messages (all optional). */
export interface ContextSources {
  knowledge?(agent: string): Promise<readonly KnowledgeEntry[]>;
  /** Newest first. */
  recentActions?(agent: string): Promise<readonly ActionEntry[]>;
  /** Retrieval of older messages in a room (embeddings). */
  recall?(roomKey: string): Recall | undefined;
  /** Summaries of a room's older history (SUMMARY_MODEL). */
  summaries?(roomKey: string): SummarySource | undefined;
}

/** The token economy's side of a turn: where its context comes from and where its usage and actions go. */
export interface TurnServices extends ContextSources {
  /** Never rejects: bookkeeping never fails a turn (a store error is logged). */
  recordUsage?(agent: string, roomKey: string, usage: LlmUsage): Promise<void>;
  recordAction?(agent: string, roomKey: string, run: ToolRun): Promise<void>;
  /** The agent's knowledge store, for its `remember` and `forget` tools. */
  memoryFor?(agent: string): AgentMemory;
}

export interface TurnContextInput {
  readonly agent: AgentConfig;
  readonly agentNames: readonly string[];
  readonly roomKey: string;
  readonly history: readonly RoomMessage[];
  readonly situation?: string | undefined;
  readonly tools: readonly Tool[];
  readonly settings: Pick<Settings, 'HISTORY_LIMIT' | 'ANSWER_RESERVE_TOKENS'>;
  readonly sources?: ContextSources | undefined;
}

/** Without `remember` an agent has no knowledge to show: its knowledge share goes to the rooms. */
export function allocationsFor(agent: AgentConfig): AgentConfig['allocations'] {
  const { knowledge, recentActions, rooms } = agent.allocations;
  return agent.tools.includes('remember')
    ? agent.allocations
    : { knowledge: 0, recentActions, rooms: rooms + knowledge };
}

/** The agent's context for this turn and the budget its tool loop keeps to. */
export async function turnContext(
  input: TurnContextInput,
): Promise<{ messages: ChatCompletionMessageParam[]; budget: TurnBudget }> {
  const counter = tokenCounter(input.agent.model);
  const definitions = input.tools.map((tool) => tool.definition);
  const { agent, sources } = input;
  const context = await buildContext({
    agent,
    agentNames: input.agentNames,
    history: input.history,
    historyLimit: input.settings.HISTORY_LIMIT,
    situation: input.situation,
    counter,
    tools: definitions,
    budget: {
      contextTokens: agent.contextTokens,
      reserve: input.settings.ANSWER_RESERVE_TOKENS,
      allocations: allocationsFor(agent),
    },
    knowledge: agent.tools.includes('remember') ? await sources?.knowledge?.(agent.name) : undefined,
    recentActions: await sources?.recentActions?.(agent.name),
    recall: sources?.recall?.(input.roomKey),
    summaries: sources?.summaries?.(input.roomKey),
  });
  // A tool result may take what a room message may: half the history share.
  const resultShare = Math.max(256, Math.floor(context.plan.history / 2));
  const budget = new TurnBudget(counter, requestLimit(context.plan), resultShare, definitions, context.messages.length);
  return { messages: context.messages, budget };
}
