/**
 * seed 004's batched turns, as pure pieces (src/bridge/batch-queue.ts schedules them): one structured-output call
 * answers for several agents of a room. The shared part (the bridge's rules, the answer format, the room's
 * transcript) is sent once; each agent gets its own segment (card, knowledge, situation) under an isolation notice.
 * The answer is validated whole before anything is applied; anything unexpected falls back to one call per agent.
 */
import type { ChatCompletionMessageParam } from './client.js';
import { BRIDGE_RULES } from './context.js';
import type { LlmUsage } from './usage.js';

/** seed 004: tokens kept free for the batch's answer. */
export const BATCH_RESERVE_TOKENS = 5000;

/** What an agent answers in a batch when it needs its tools: it is then asked on its own. */
export const TOOLS_MARKER = '[tools]';

/** seed 004's security notice, for a batch of more than one agent. */
export const BATCH_ISOLATION_NOTICE = [
  'This request answers for several independent agents at once. For each of them:',
  "- Its knowledge and situation are confidential to it: never use one agent's segment in another agent's answer.",
  '- Do not mention what another agent knows, was asked or is about to say.',
  '- Write each answer as that agent alone would, from the room transcript and its own segment only.',
].join('\n');

export interface BatchAgent {
  readonly name: string;
  /** Its card (who it is, its prompt). */
  readonly card: string;
  /** Its knowledge block, if any. */
  readonly knowledge?: string | undefined;
  /** Its recent actions block, if any. */
  readonly actions?: string | undefined;
  /** The tools it would have on its own turn (it answers [tools] to use them). */
  readonly tools?: readonly string[] | undefined;
  /** Why it is asked now. */
  readonly situation: string;
  /** Its context budget (`context_tokens`). */
  readonly contextTokens: number;
}

const rule = '='.repeat(80);
const line = '-'.repeat(80);

// The same for every batch, so every batch of a room shares its prefix up to the transcript's end; the names of
// the batch's agents come last (answerKeys).
const ANSWER_FORMAT = [
  'Answer with one JSON object with one key per agent listed under AGENTS (its name without @) and nothing else.',
  "Each value is that agent's reply as plain text (without a [@name]: prefix), or exactly [pass] when it has",
  `nothing useful to add, or exactly ${TOOLS_MARKER} when it needs its tools to answer (it is then asked on its own).`,
].join('\n');

function answerKeys(names: readonly string[]): string {
  return `Answer with exactly these keys: ${names.map((n) => `"${n}"`).join(', ')}.`;
}

/** The shared section: what every agent in the batch would have read in its own request. */
export function batchShared(names: readonly string[]): string {
  return [BRIDGE_RULES, ANSWER_FORMAT, ...(names.length > 1 ? [BATCH_ISOLATION_NOTICE] : [])].join('\n\n');
}

/** One agent's segment (seed 004's layout: identity, knowledge, situation). */
export function batchSegment(agent: BatchAgent, index: number): string {
  return [
    line,
    `AGENT ${index + 1}: @${agent.name}`,
    line,
    '>>> IDENTITY <<<',
    agent.card,
    ...(agent.tools && agent.tools.length > 0
      ? [`Your tools (answer exactly ${TOOLS_MARKER} to use them): ${agent.tools.join(', ')}`]
      : []),
    ...(agent.knowledge ? [agent.knowledge] : []),
    ...(agent.actions ? [agent.actions] : []),
    '>>> SITUATION <<<',
    agent.situation,
  ].join('\n');
}

/**
 * The batch request: the shared section as the system message; the room's transcript once, then every agent's
 * segment and the answer's keys, as one user message. The caller batches agents that see the same transcript.
 * Only what follows the transcript depends on who is in the batch, so a provider's prompt cache can reuse the
 * rules and the transcript across batches of different agents (where the schema itself is not part of the prefix).
 */
export function batchPrompt(input: {
  readonly transcript: string;
  readonly agents: readonly BatchAgent[];
}): ChatCompletionMessageParam[] {
  const names = input.agents.map((a) => a.name);
  const body = [
    rule,
    'ROOM TRANSCRIPT (oldest first)',
    rule,
    input.transcript,
    rule,
    'AGENTS',
    rule,
    ...input.agents.map(batchSegment),
    rule,
    answerKeys(names),
  ].join('\n');
  return [
    { role: 'system', content: batchShared(names) },
    { role: 'user', content: body },
  ];
}

/** The `response_format` that makes the model answer with one string per agent of the batch, and nothing else. */
export function batchResponseFormat(names: readonly string[]) {
  return {
    type: 'json_schema' as const,
    json_schema: {
      name: 'agent_replies',
      strict: true,
      schema: {
        type: 'object',
        properties: Object.fromEntries(
          names.map((name) => [
            name,
            { type: 'string', description: `@${name}'s reply, or [pass], or ${TOOLS_MARKER}` },
          ]),
        ),
        required: [...names],
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
  | { readonly ok: true; readonly replies: ReadonlyMap<string, BatchReply> }
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

/**
 * Validates a batch answer before anything is applied: a JSON object whose keys are exactly the batch's agents and
 * whose values are strings (a reply, `[pass]`, or exactly `[tools]`), each written as that agent only (no line
 * speaking as another). Anything else means: fall back to one call per agent.
 */
export function parseBatchAnswer(raw: string, names: readonly string[]): BatchAnswer {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, reason: 'the answer is not JSON' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'the answer is not a JSON object' };
  }
  const answer = value as Record<string, unknown>;
  const unknown = Object.keys(answer).filter((key) => !names.includes(key));
  if (unknown.length > 0) return { ok: false, reason: `it answers for agents not in the batch: ${unknown.join(', ')}` };
  const replies = new Map<string, BatchReply>();
  for (const name of names) {
    const text = answer[name];
    if (typeof text !== 'string') {
      return { ok: false, reason: text === undefined ? `no answer for @${name}` : `@${name}'s answer is not text` };
    }
    const own = speaksAs(name, text.trim());
    if (own.other) return { ok: false, reason: `@${name}'s answer speaks as ${own.other}` };
    const trimmed = own.text.trim();
    if (trimmed === TOOLS_MARKER) replies.set(name, { kind: 'tools' });
    else if (trimmed.includes(TOOLS_MARKER)) {
      return { ok: false, reason: `@${name}'s answer mixes ${TOOLS_MARKER} with text` };
    } else if (trimmed === '' || trimmed.toLowerCase() === '[pass]') replies.set(name, { kind: 'pass' });
    else replies.set(name, { kind: 'reply', text: trimmed });
  }
  return { ok: true, replies };
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
