/**
 * Batched turns (seed 004) against a model: the request for agents that see the same room (every batchable agent's
 * seat and the transcript once, then one segment per asked agent, each within its own allocations), and the one
 * structured-output call that answers for all of them, its usage split among them.
 */
import type { AgentConfig, Settings } from '../config/index.js';
import type { Logger } from '../log.js';
import type { Place } from '../room/privacy.js';
import type { RoomMessage } from '../room/types.js';
import {
  answerLine,
  type BatchAgent,
  type BatchAnswer,
  type BatchSeat,
  batchPrefix,
  batchPrompt,
  batchResponseFormat,
  batchSegment,
  batchShared,
  parseBatchAnswer,
  splitUsage,
} from './batch.js';
import { type BudgetPlan, clipText, planBudget } from './budget.js';
import { actionsBlock, agentCard, BRIDGE_RULES, knowledgeBlock } from './context.js';
import { foreignBotsIn } from './foreign-bots.js';
import { historyStart } from './history-window.js';
import { clipWithin, type RenderOptions, renderedWithin, renderMessage } from './render-message.js';
import { MESSAGE_OVERHEAD, REQUEST_OVERHEAD, type TokenCounter, tokenCounter } from './tokens.js';
import { allocationsFor, type ContextSources } from './turn-context.js';
import type { CallMeter, LlmClient } from './types.js';
import { cleanText } from './untrusted.js';
import type { LlmUsage } from './usage.js';

export interface BatchMember {
  readonly agent: AgentConfig;
  /** Why it is asked now (the rendered situation, with its notes). */
  readonly situation: string;
}

export interface BatchInput {
  readonly members: readonly BatchMember[];
  /**
   * The room's batchable agents (every agent that may share a call with the members: the same endpoint, model and
   * key), in configured order: each has a seat in every batch, so batches of other members share the prefix.
   * Default: the members.
   */
  readonly roster?: readonly AgentConfig[] | undefined;
  /** Everyone at the table, for the cards. */
  readonly agentNames: readonly string[];
  /** What every member may see of the room, oldest first: the same for all of them. */
  readonly history: readonly RoomMessage[];
  /** The room and the audience of the exchange the batch answers (what its members' memory may show). */
  readonly place: Place;
  /** The room's id in the store (recall searches its stored history). */
  readonly roomId: number;
  readonly settings: Pick<Settings, 'HISTORY_LIMIT' | 'ANSWER_RESERVE_TOKENS'> &
    Partial<Pick<Settings, 'DISCORD_ALLOWED_BOTS' | 'SLACK_ALLOWED_BOTS'>>;
  readonly sources?: ContextSources | undefined;
}

export interface PreparedBatch {
  /** The room's transcript (and older messages that may be relevant), sent once. */
  readonly transcript: string;
  /** Every batchable agent's seat, in configured order. */
  readonly seats: readonly BatchSeat[];
  /** The members that have a segment, in member order. */
  readonly members: ReadonlyArray<{
    readonly agent: AgentConfig;
    readonly segment: BatchAgent;
    /** What its segment adds to a batch, as counted. */
    readonly tokens: number;
  }>;
  /** Members whose fixed parts leave no room in their budget: asked on their own (which says so clearly). */
  readonly unfit: readonly AgentConfig[];
  /** The shared part of a batch (rules, answer format, notice, seats, transcript), as counted. */
  readonly sharedTokens: number;
}

/** The rules, the tools line and the card: what each member's budget gives up before the allocations. */
function fixedTokens(counter: TokenCounter, card: string, tools: readonly string[]): number {
  return REQUEST_OVERHEAD + 2 * MESSAGE_OVERHEAD + counter.count(BRIDGE_RULES) + counter.count(card) + 4 * tools.length;
}

/**
 * Every batchable agent's seat and one transcript for all: the window the batchable agent with the smallest history
 * share would see on its own (the same cut points, so the prefix caches across calls and across batches of other
 * members too); then each member's segment within its own allocations.
 */
export async function prepareBatch(input: BatchInput): Promise<PreparedBatch> {
  const model = input.members[0]?.agent.model ?? '';
  const counter = tokenCounter(model);
  const roster = input.roster ?? input.members.map((m) => m.agent);
  const planned: Array<{ agent: AgentConfig; card: string; plan: BudgetPlan }> = [];
  const unfit: AgentConfig[] = [];
  for (const agent of roster) {
    const others = input.agentNames.filter((n) => n.toLowerCase() !== agent.name.toLowerCase());
    const card = agentCard(agent.name, others, agent.systemPrompt);
    try {
      const plan = planBudget({
        agent: agent.name,
        contextTokens: agent.contextTokens,
        reserve: input.settings.ANSWER_RESERVE_TOKENS,
        fixed: fixedTokens(counter, card, agent.tools),
        allocations: allocationsFor(agent),
      });
      planned.push({ agent, card, plan });
    } catch {
      unfit.push(agent);
    }
  }
  const asked = input.members.filter((m) => planned.some((p) => p.agent === m.agent));
  const unfitMembers = input.members.filter((m) => !asked.includes(m)).map((m) => m.agent);
  if (asked.length === 0) return { transcript: '', seats: [], members: [], unfit: unfitMembers, sharedTokens: 0 };
  // The window of the batchable agent with the smallest history share: the same for every batch of the room.
  const share = Math.min(...planned.map((p) => p.plan.history));
  const marks = { foreignBot: foreignBotsIn(input.place.room, input.settings) };
  const { transcript, leftOut } = transcriptWithin(input.history, share, input.settings.HISTORY_LIMIT, counter, marks);
  const retrieved = await retrievedBlock(input, leftOut, share, counter, marks);
  const shown = retrieved ? `${transcript}\n\n${retrieved}` : transcript;

  const sources = input.sources;
  const seats: BatchSeat[] = [];
  for (const { agent, card, plan } of planned) {
    const knowledge = agent.tools.includes('remember')
      ? ((await sources?.knowledge?.(agent.name, input.place)) ?? [])
      : undefined;
    seats.push({
      name: agent.name,
      card,
      knowledge: knowledge ? knowledgeBlock(knowledge, plan.knowledge, counter) : undefined,
      tools: agent.tools,
    });
  }
  const members = [];
  for (const member of asked) {
    const { agent } = member;
    const { plan } = planned.find((p) => p.agent === agent) as { plan: BudgetPlan };
    const seat = seats.find((s) => s.name === agent.name) as BatchSeat;
    const segment: BatchAgent = {
      ...seat,
      actions: actionsBlock(
        (await sources?.recentActions?.(agent.name, input.place)) ?? [],
        plan.recentActions,
        counter,
      ),
      situation: clipText(cleanText(member.situation), plan.turn, counter),
      contextTokens: agent.contextTokens,
    };
    members.push({ agent, segment, tokens: counter.count(batchSegment(segment)) + counter.count(agent.name) + 3 });
  }
  const sharedTokens =
    REQUEST_OVERHEAD +
    2 * MESSAGE_OVERHEAD +
    counter.count(batchShared()) +
    counter.count(batchPrefix({ seats, transcript: shown })) +
    counter.count(answerLine([])) +
    8;
  return { transcript: shown, seats, members, unfit: unfitMembers, sharedTokens };
}

/** Who may share a batched call with `agent`: the agents on its endpoint, model and key, in configured order. */
export function batchRoster(agents: readonly AgentConfig[], agent: AgentConfig): AgentConfig[] {
  return agents.filter((a) => a.endpoint === agent.endpoint && a.model === agent.model && a.apiKey === agent.apiKey);
}

/** The newest messages that fit `share` and HISTORY_LIMIT, cut in blocks as an agent's own history is. */
function transcriptWithin(
  history: readonly RoomMessage[],
  share: number,
  historyLimit: number,
  counter: TokenCounter,
  shown: RenderOptions,
): { transcript: string; leftOut: readonly RoomMessage[] } {
  const rendered = history.map((message) => {
    const { text, tokens } = renderedWithin(message, Math.floor(share / 2), counter, shown);
    return { message, text, tokens: tokens + 1 };
  });
  const start = historyStart(
    rendered.map((r) => ({ id: r.message.id, tokens: r.tokens })),
    { maxMessages: historyLimit, maxTokens: share },
  );
  return {
    transcript: rendered
      .slice(start)
      .map((r) => r.text)
      .join('\n'),
    leftOut: history.slice(0, start),
  };
}

/** Older messages like the newest one, once for the batch (its members see the same room). */
async function retrievedBlock(
  input: BatchInput,
  leftOut: readonly RoomMessage[],
  share: number,
  counter: TokenCounter,
  marks: RenderOptions,
): Promise<string> {
  const viewers = input.members.map((m) => m.agent.name);
  const recall = input.sources?.recall?.({ key: input.place.room, id: input.roomId }, viewers);
  const newest = input.history.at(-1);
  if (!recall || !newest) return '';
  const shown = input.history.slice(leftOut.length);
  const found = (await recall(newest, shown[0]?.id ?? newest.id)).filter(
    (m) => !shown.some((s) => s.content === m.content),
  );
  const lines = [...found]
    .sort((a, b) => a.id - b.id)
    .map((m) => clipWithin(renderMessage(m, marks), Math.floor(share / 8), counter));
  return lines.length > 0 ? `>>> OLDER MESSAGES THAT MAY BE RELEVANT <<<\n${lines.join('\n')}` : '';
}

/** Some servers put structured output in a code fence all the same. */
function unfenced(content: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i.exec(content);
  return fenced?.[1] ?? content;
}

export interface BatchCall {
  readonly client: LlmClient;
  readonly model: string;
  readonly temperature?: number | undefined;
  readonly transcript: string;
  /** Every batchable agent's seat, in configured order (the same for every batch of the room). */
  readonly seats: readonly BatchSeat[];
  /** The batch's segments, in queue order. */
  readonly agents: readonly BatchAgent[];
  /** The shared part's tokens and each segment's, to split the call's usage. */
  readonly sharedTokens: number;
  readonly segmentTokens: readonly number[];
  readonly signal?: AbortSignal | undefined;
  /** Each agent's part of the call's usage. */
  readonly onUsage?: ((agent: string, usage: LlmUsage) => void) | undefined;
  readonly log?: Logger | undefined;
  /** The answer's cap in tokens (every agent's own cap, added up). */
  readonly maxOutputTokens?: number | undefined;
  /** Spending limits: the call is held for each of its agents before it is made. */
  readonly meter?: CallMeter | undefined;
}

/** One call for the whole batch; the answer is validated before the caller applies any of it. */
export async function callBatch(call: BatchCall): Promise<BatchAnswer> {
  const names = call.agents.map((a) => a.name);
  const started = Date.now();
  const response = await call.client.complete({
    model: call.model,
    messages: batchPrompt({ seats: call.seats, transcript: call.transcript, agents: call.agents }),
    responseFormat: batchResponseFormat(call.seats.map((s) => s.name)),
    temperature: call.temperature,
    signal: call.signal,
    maxOutputTokens: call.maxOutputTokens,
    meter: call.meter,
  });
  const answer: BatchAnswer =
    response.toolCalls.length > 0
      ? { ok: false, reason: 'it called tools' }
      : parseBatchAnswer(unfenced(response.content), names);
  if (answer.ok && answer.ignored.length > 0) {
    call.log?.warn(
      { agents: names, ignored: answer.ignored },
      'batch answer has replies for agents not asked: ignored',
    );
  }
  if (response.usage && call.onUsage) {
    const each = call.sharedTokens / Math.max(1, names.length);
    const parts = names.map((name, i) => {
      const reply = answer.ok ? answer.replies.get(name) : undefined;
      return {
        input: each + (call.segmentTokens[i] ?? 0),
        output: reply?.kind === 'reply' ? reply.text.length : reply ? 6 : 1,
      };
    });
    const shares = splitUsage(response.usage, parts);
    for (const [i, usage] of shares.entries()) call.onUsage(names[i] ?? '', usage);
  }
  call.log?.debug(
    {
      agents: names,
      model: call.model,
      ms: Date.now() - started,
      ok: answer.ok,
      ...(response.usage
        ? { tokensIn: response.usage.input, tokensCached: response.usage.cached, tokensOut: response.usage.output }
        : {}),
    },
    'llm batch call',
  );
  return answer;
}
