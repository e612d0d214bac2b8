/**
 * seed 004's batched turns, as pure pieces (src/bridge/executors/batch-queue.ts schedules them): one structured-output call
 * answers for several agents of a room. The request is laid out so that every batch of a room shares its prefix up
 * to the transcript's end, whoever is in it: one response schema for the room, the rules, every batchable agent's
 * seat (card, tools, knowledge) in configured order, the transcript; only then who must answer now, each with what
 * changes every turn (recent actions, situation). The answer is validated whole before anything is applied; anything
 * unexpected falls back to one call per agent.
 */
import type { ChatCompletionMessageParam } from './client.js';
import { BRIDGE_RULES } from './context.js';
import type { LlmUsage } from './usage.js';

/** seed 004: tokens kept free for the batch's answer. */
export const BATCH_RESERVE_TOKENS = 5000;

/** What an agent answers in a batch when it needs its tools: it is then asked on its own. */
export const TOOLS_MARKER = '[tools]';

/** seed 004's security notice (every batch carries it, so every batch of a room shares the system message). */
export const BATCH_ISOLATION_NOTICE = [
  'This request answers for several independent agents at once. For each of them:',
  "- Its knowledge and situation are confidential to it: never use one agent's segment in another agent's answer.",
  '- Do not mention what another agent knows, was asked or is about to say.',
  '- Write each answer as that agent alone would, from the room transcript and its own segment only.',
].join('\n');

/** What a batch shows of an agent whoever is asked: it changes only when its card or knowledge changes. */
export interface BatchSeat {
  readonly name: string;
  /** Its card (who it is, its prompt). */
  readonly card: string;
  /** Its knowledge block, if any. */
  readonly knowledge?: string | undefined;
  /** The tools it would have on its own turn (it answers [tools] to use them). */
  readonly tools?: readonly string[] | undefined;
}

/** An agent asked in a batch: its seat, and what changes every turn. */
export interface BatchAgent extends BatchSeat {
  /** Its recent actions block, if any. */
  readonly actions?: string | undefined;
  /** Why it is asked now. */
  readonly situation: string;
  /** Its context budget (`context_tokens`). */
  readonly contextTokens: number;
}

const rule = '='.repeat(80);
const line = '-'.repeat(80);

/** The heading of the part that names who must answer now (after the transcript). */
export const ASKED_HEADING = 'ASKED NOW';

// The same for every batch: who must answer is named last (answerLine).
const ANSWER_FORMAT = [
  `Answer with one JSON object {"replies": [...]}: one item {"agent": name, "reply": text} for each agent listed under`,
  `${ASKED_HEADING}, in that order, and for no other agent (the others at the table are not asked this time).`,
  "Each reply is that agent's reply as plain text (without a [@name]: prefix), or exactly [pass] when it has",
  `nothing useful to add, or exactly ${TOOLS_MARKER} when it needs its tools to answer (it is then asked on its own).`,
].join('\n');

/** The request's last line: who must answer. */
export function answerLine(names: readonly string[]): string {
  return `Answer for exactly these agents, in this order: ${names.map((n) => `"${n}"`).join(', ')}.`;
}

/** The system message: the same for every batch. */
export function batchShared(): string {
  return [BRIDGE_RULES, ANSWER_FORMAT, BATCH_ISOLATION_NOTICE].join('\n\n');
}

/** An agent's seat at the table (seed 004's identity part: card, tools, knowledge), in configured order. */
export function batchSeat(seat: BatchSeat, index: number): string {
  return [
    line,
    `AGENT ${index + 1}: @${seat.name}`,
    line,
    '>>> IDENTITY <<<',
    seat.card,
    ...(seat.tools && seat.tools.length > 0
      ? [`Your tools (answer exactly ${TOOLS_MARKER} to use them): ${seat.tools.join(', ')}`]
      : []),
    ...(seat.knowledge ? [seat.knowledge] : []),
  ].join('\n');
}

/** What an asked agent's part says this turn: its recent actions and its situation. */
export function batchSegment(agent: Pick<BatchAgent, 'name' | 'actions' | 'situation'>): string {
  return [
    line,
    `@${agent.name}`,
    line,
    ...(agent.actions ? [agent.actions] : []),
    '>>> SITUATION <<<',
    agent.situation,
  ].join('\n');
}

/** Everything up to the transcript's end: the same for every batch of a room with the same seats and room. */
export function batchPrefix(input: { readonly seats: readonly BatchSeat[]; readonly transcript: string }): string {
  return [
    rule,
    'AGENTS AT THE TABLE',
    rule,
    ...input.seats.map(batchSeat),
    rule,
    'ROOM TRANSCRIPT (oldest first)',
    rule,
    input.transcript,
    rule,
  ].join('\n');
}

/**
 * The batch request: the system message (rules, answer format, isolation notice); then one user message with every
 * batchable agent's seat, the room's transcript once, and last the agents asked now, each with its recent actions
 * and situation, and the line naming them. Nothing before the asked part depends on who is in the batch.
 */
export function batchPrompt(input: {
  readonly seats: readonly BatchSeat[];
  readonly transcript: string;
  readonly agents: ReadonlyArray<Pick<BatchAgent, 'name' | 'actions' | 'situation'>>;
}): ChatCompletionMessageParam[] {
  const body = [
    batchPrefix(input),
    ASKED_HEADING,
    rule,
    ...input.agents.map(batchSegment),
    rule,
    answerLine(input.agents.map((a) => a.name)),
  ].join('\n');
  return [
    { role: 'system', content: batchShared() },
    { role: 'user', content: body },
  ];
}

/**
 * The `response_format` of every batch of a room: a list of `{ agent, reply }` items, the agent one of the room's
 * batchable agents (`seats`, configured order). It does not change with who is asked, so it stays in the cached
 * prefix where a server makes the schema part of the prompt (OpenAI).
 */
export function batchResponseFormat(seats: readonly string[]) {
  return {
    type: 'json_schema' as const,
    json_schema: {
      name: 'agent_replies',
      strict: true,
      schema: {
        type: 'object',
        properties: {
          replies: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                agent: { type: 'string', enum: [...seats] },
                reply: { type: 'string', description: `the agent's reply, or [pass], or ${TOOLS_MARKER}` },
              },
              required: ['agent', 'reply'],
              additionalProperties: false,
            },
          },
        },
        required: ['replies'],
        additionalProperties: false,
      },
    },
  };
}

/**
 * seed 004's packing: agents join the batch in queue order (FIFO) while the shared part and their segments fit
 * within the smallest budget among the batch's agents, less BATCH_RESERVE_TOKENS. The first agent that does not
 * fit, and everyone after it, wait for the next batch (the order is kept). A batch may come back empty: its first
 * agent does not fit even alone, and is asked on its own.
 */
export function packBatch<T extends { readonly contextTokens: number }>(
  queue: readonly T[],
  cost: { readonly shared: number; segment(agent: T): number },
  reserve: number = BATCH_RESERVE_TOKENS,
): { batch: T[]; rest: T[] } {
  const batch: T[] = [];
  let used = cost.shared;
  let budget = Number.POSITIVE_INFINITY;
  for (const agent of queue) {
    const nextBudget = Math.min(budget, agent.contextTokens);
    const nextUsed = used + cost.segment(agent);
    if (nextUsed > nextBudget - reserve) break;
    batch.push(agent);
    used = nextUsed;
    budget = nextBudget;
  }
  return { batch, rest: queue.slice(batch.length) };
}

export type BatchReply =
  | { readonly kind: 'reply'; readonly text: string }
  | { readonly kind: 'pass' }
  /** It needs its tools: ask it on its own. */
  | { readonly kind: 'tools' };

export type BatchAnswer =
  | {
      readonly ok: true;
      readonly replies: ReadonlyMap<string, BatchReply>;
      /** Agents the answer has items for that were not asked (ignored). */
      readonly ignored: readonly string[];
    }
  | { readonly ok: false; readonly reason: string };

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');

/**
 * Who else a reply claims to speak as: a line opening with another speaker's transcript prefix (`[@ben]: `,
 * `[system]: `). The agent's own prefix at the very start is only the transcript format echoed, and is dropped.
 */
function speaksAs(name: string, text: string): { text: string; other?: string } {
  const own = new RegExp(`^\\[@${escapeRegExp(name)}\\]:\\s*`, 'i');
  const reply = text.replace(own, '');
  for (const match of reply.matchAll(/^\s*\[(@[^\]\s]+|system)\]:/gim)) {
    const speaker = match[1] ?? '';
    if (!same(speaker, `@${name}`)) return { text: reply, other: speaker };
  }
  return { text: reply };
}

/** The answer's items: `{"replies": [{agent, reply}, ...]}`; a reason when it is not that shape. */
function itemsOf(raw: string): Array<{ agent: string; reply: unknown }> | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return 'the answer is not JSON';
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'the answer is not a JSON object';
  const replies = (value as { replies?: unknown }).replies;
  if (!Array.isArray(replies)) return 'the answer has no list of replies';
  const items: Array<{ agent: string; reply: unknown }> = [];
  for (const item of replies) {
    const agent = (item as { agent?: unknown } | null)?.agent;
    if (!item || typeof item !== 'object' || typeof agent !== 'string') return 'a reply names no agent';
    items.push({ agent, reply: (item as { reply?: unknown }).reply });
  }
  return items;
}

/**
 * Validates a batch answer before anything is applied: a JSON object whose `replies` list has one item for each
 * asked agent, its reply a string (a reply, `[pass]`, or exactly `[tools]`) written as that agent only (no line
 * speaking as another). An item for an agent not asked is ignored (and named in `ignored`, for the log); a missing
 * or doubled item, or anything else, means: fall back to one call per agent.
 */
export function parseBatchAnswer(raw: string, names: readonly string[]): BatchAnswer {
  const items = itemsOf(raw);
  if (typeof items === 'string') return { ok: false, reason: items };
  const ignored = [
    ...new Set(items.filter((item) => !names.some((n) => same(n, item.agent))).map((item) => item.agent)),
  ];
  const replies = new Map<string, BatchReply>();
  for (const name of names) {
    const own = items.filter((item) => same(item.agent, name));
    if (own.length > 1) return { ok: false, reason: `more than one answer for @${name}` };
    const text = own[0]?.reply;
    if (typeof text !== 'string') {
      return { ok: false, reason: own.length === 0 ? `no answer for @${name}` : `@${name}'s answer is not text` };
    }
    const spoken = speaksAs(name, text.trim());
    if (spoken.other) return { ok: false, reason: `@${name}'s answer speaks as ${spoken.other}` };
    const trimmed = spoken.text.trim();
    if (trimmed === TOOLS_MARKER) replies.set(name, { kind: 'tools' });
    else if (trimmed.includes(TOOLS_MARKER)) {
      return { ok: false, reason: `@${name}'s answer mixes ${TOOLS_MARKER} with text` };
    } else if (trimmed === '' || trimmed.toLowerCase() === '[pass]') replies.set(name, { kind: 'pass' });
    else replies.set(name, { kind: 'reply', text: trimmed });
  }
  return { ok: true, replies, ignored };
}

/** Shares `total` in proportion to `weights`, in whole numbers that add up to it exactly (largest remainder). */
function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (weights.length === 0) return [];
  const exact = weights.map((w) => (sum > 0 ? (total * w) / sum : total / weights.length));
  const shares = exact.map(Math.floor);
  let left = total - shares.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => ({ i, rest: x - Math.floor(x) })).sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    shares[i] = (shares[i] ?? 0) + 1;
    left--;
  }
  return shares;
}

/**
 * One batch call's usage, split among its agents so the parts add up to the call: input by what each agent's
 * request would have carried (the shared part in equal shares plus its own segment), cached input in proportion
 * to that, output by the length of each agent's answer.
 */
export function splitUsage(
  usage: LlmUsage,
  parts: ReadonlyArray<{ readonly input: number; readonly output: number }>,
): LlmUsage[] {
  const input = apportion(
    usage.input,
    parts.map((p) => p.input),
  );
  const cached = apportion(Math.min(usage.cached, usage.input), input);
  const output = apportion(
    usage.output,
    parts.map((p) => p.output),
  );
  return parts.map((_, i) => ({ input: input[i] ?? 0, cached: cached[i] ?? 0, output: output[i] ?? 0 }));
}
