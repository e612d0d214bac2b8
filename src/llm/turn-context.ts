import type { AgentConfig, Settings } from '../config/index.js';
import type { Place } from '../room/privacy.js';
import type { RoomMessage, ToolRun } from '../room/types.js';
import type { AgentMemory, Tool } from '../tools/tool.js';
import { requestLimit } from './budget.js';
import type { ChatCompletionMessageParam, LlmUsage } from './client.js';
import { type ActionEntry, buildContext, type KnowledgeEntry, type Recall, type SummarySource } from './context.js';
import { foreignBotsIn } from './foreign-bots.js';
import { tokenCounter } from './tokens.js';
import { TurnBudget } from './turn-budget.js';

/** A room as recall searches it: its key (spending) and its id in the store. */
export interface RecallRoom {
  readonly key: string;
  readonly id: number;
}

/**
 * What an agent's context draws on beside the room: its memory and the room's older messages (all optional). Memory
 * is asked for at the turn's place (its room and exchange): only what may be shown there comes back.
 */
export interface ContextSources {
  knowledge?(agent: string, here: Place): Promise<readonly KnowledgeEntry[]>;
  /** Newest first. */
  recentActions?(agent: string, here: Place): Promise<readonly ActionEntry[]>;
  /** Retrieval of older messages in a room (embeddings), of those every one of `viewers` may see. */
  recall?(room: RecallRoom, viewers: readonly string[]): Recall | undefined;
  /** Summaries of a room's older history (SUMMARY_MODEL). */
  summaries?(roomKey: string): SummarySource | undefined;
}

/** The token economy's side of a turn: where its context comes from and where its usage and actions go. */
export interface TurnServices extends ContextSources {
  /** Never rejects: bookkeeping never fails a turn (a store error is logged). */
  recordUsage?(agent: string, roomKey: string, usage: LlmUsage): Promise<void>;
  /** Records a tool run with the place of the turn that ran it. */
  recordAction?(agent: string, place: Place, run: ToolRun): Promise<void>;
  /** The agent's knowledge store at the turn's place, for its `remember` and `forget` tools. */
  memoryFor?(agent: string, place: Place): AgentMemory;
}

export interface TurnContextInput {
  readonly agent: AgentConfig;
  readonly agentNames: readonly string[];
  /** The turn's room and the audience of its exchange (what its memory may show). */
  readonly place: Place;
  /** The room's id in the store (recall searches its stored history). */
  readonly roomId: number;
  readonly history: readonly RoomMessage[];
  readonly situation?: string | undefined;
  readonly tools: readonly Tool[];
  readonly settings: Pick<Settings, 'HISTORY_LIMIT' | 'ANSWER_RESERVE_TOKENS'> &
    Partial<Pick<Settings, 'DISCORD_ALLOWED_BOTS' | 'SLACK_ALLOWED_BOTS'>>;
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
    knowledge: agent.tools.includes('remember') ? await sources?.knowledge?.(agent.name, input.place) : undefined,
    recentActions: await sources?.recentActions?.(agent.name, input.place),
    recall: sources?.recall?.({ key: input.place.room, id: input.roomId }, [agent.name]),
    summaries: sources?.summaries?.(input.place.room),
    foreignBot: foreignBotsIn(input.place.room, input.settings),
  });
  // A tool result may take what a room message may: half the history share.
  const resultShare = Math.max(256, Math.floor(context.plan.history / 2));
  const budget = new TurnBudget(
    counter,
    requestLimit(context.plan),
    resultShare,
    definitions,
    context.messages.length,
    context.tokens,
  );
  return { messages: context.messages, budget };
}
