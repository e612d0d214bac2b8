import { createRequire } from 'node:module';
import type { ChatCompletionMessageParam, ChatCompletionTool } from './types.js';

/** The two OpenAI encodings the bridge counts with. */
export type EncodingName = 'o200k_base' | 'cl100k_base';

/**
 * Counts are multiplied by this for models whose own tokenizer is unknown (Llama, Qwen, Mistral, …):
 * their vocabularies are smaller than o200k and split text into up to ~20% more tokens than cl100k.
 */
export const APPROXIMATION_MARGIN = 1.2;
/** OpenAI's chat format: each message costs its role and delimiters, about 4 tokens, and 3 more prime the answer. */
export const MESSAGE_OVERHEAD = 4;
export const REQUEST_OVERHEAD = 3;

export interface TokenCounter {
  readonly encoding: EncodingName;
  /** True when this is the model's own encoding; false for the approximation (margin included in counts). */
  readonly exact: boolean;
  count(text: string): number;
}

/** Which encoding a model uses: o200k for the GPT-4o generation on, cl100k for GPT-4 / 3.5, else approximate. */
export function encodingFor(model: string): { encoding: EncodingName; exact: boolean } {
  const id = (model.split('/').pop() ?? model).toLowerCase();
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[134](-|$))/.test(id)) {
    return { encoding: 'o200k_base', exact: true };
  }
  if (/^(gpt-4|gpt-3\.5|gpt-35|text-embedding-3|text-embedding-ada-002)/.test(id)) {
    return { encoding: 'cl100k_base', exact: true };
  }
  return { encoding: 'cl100k_base', exact: false };
}

type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;

const require = createRequire(import.meta.url);
const loaded = new Map<EncodingName, CountTokens>();

// The rank tables take a few hundred milliseconds to load: only the encodings a model needs, on first use.
function countFunction(encoding: EncodingName): CountTokens {
  let count = loaded.get(encoding);
  if (!count) {
    count = (require(`gpt-tokenizer/cjs/encoding/${encoding}`) as { countTokens: CountTokens }).countTokens;
    loaded.set(encoding, count);
  }
  return count;
}

/**
 * What a turn counts besides the room's messages (kept with each message) comes again on every call: the bridge's
 * rules and the agent's card, the tool schemas, its knowledge, a pasted file in a tool result. Counts of texts from
 * CACHE_FROM_CHARS up are remembered, the least recently used forgotten first, within CACHE_CHARS characters in all.
 * Shorter texts cost less to count than to look up.
 */
const CACHE_FROM_CHARS = 128;
const CACHE_CHARS = 8_000_000;

class BpeCounter implements TokenCounter {
  private readonly cache = new Map<string, number>();
  private cached = 0;
  /** Texts actually run through the tokenizer (the benchmarks and tests read it). */
  tokenized = 0;

  constructor(
    readonly encoding: EncodingName,
    readonly exact: boolean,
  ) {}

  count(text: string): number {
    if (text.length === 0) return 0;
    if (text.length < CACHE_FROM_CHARS || text.length > CACHE_CHARS / 8) return this.raw(text);
    const known = this.cache.get(text);
    if (known !== undefined) {
      // Used again: the newest.
      this.cache.delete(text);
      this.cache.set(text, known);
      return known;
    }
    const value = this.raw(text);
    this.cached += text.length;
    for (const [oldest] of this.cache) {
      if (this.cached <= CACHE_CHARS) break;
      this.cache.delete(oldest);
      this.cached -= oldest.length;
    }
    this.cache.set(text, value);
    return value;
  }

  private raw(text: string): number {
    this.tokenized += 1;
    return fromRaw(this, rawCount(this.encoding, text));
  }
}

// Text is counted as text: a user writing "<|endoftext|>" is not a special token (and must not throw).
const PLAIN = { disallowedSpecial: new Set<string>() };

/** The tokens of `text` in `encoding`, without the approximation margin (what a message keeps as its count). */
export function rawCount(encoding: EncodingName, text: string): number {
  if (text.length === 0) return 0;
  const count = countFunction(encoding);
  let tokens = 0;
  for (const piece of pieces(text)) tokens += count(piece, PLAIN);
  return tokens;
}

/** A raw count as `counter` counts: the approximation margin applied for a model whose tokenizer is unknown. */
export function fromRaw(counter: Pick<TokenCounter, 'exact'>, raw: number): number {
  return counter.exact ? raw : Math.ceil(raw * APPROXIMATION_MARGIN);
}

/**
 * BPE time grows with the square of a word's length: 200 KB of letters without a space takes over a minute.
 * Counting in pieces of at most PIECE characters, cut before a space where there is one (where BPE splits anyway),
 * bounds it; a piece cut inside a word counts at most one token more than the whole would, so it never undercounts.
 */
const PIECE = 512;

function* pieces(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > PIECE) {
    let end = start + PIECE;
    const space = text.slice(start, end).search(/\s\S*$/);
    if (space > PIECE / 2) end = start + space;
    else if (/[\uD800-\uDBFF]/.test(text[end - 1] ?? '')) end -= 1; // keep a surrogate pair together
    yield text.slice(start, end);
    start = end;
  }
  yield text.slice(start);
}

const counters = new Map<string, TokenCounter>();

/** The counter for a model (shared by every agent on the same encoding). */
export function tokenCounter(model: string): TokenCounter {
  const { encoding, exact } = encodingFor(model);
  const key = `${encoding}:${exact}`;
  let counter = counters.get(key);
  if (!counter) {
    counter = new BpeCounter(encoding, exact);
    counters.set(key, counter);
  }
  return counter;
}

/**
 * The counter for what a model writes, held against its output cap: the model's encoding without the margin of
 * `tokenCounter` (a server's own count of its answer is what the cap bounds; with the margin, an answer the server
 * kept within the cap would be cut short).
 */
export function answerCounter(model: string): TokenCounter {
  const { encoding } = encodingFor(model);
  const key = `${encoding}:answer`;
  let counter = counters.get(key);
  if (!counter) {
    counter = new BpeCounter(encoding, true);
    counters.set(key, counter);
  }
  return counter;
}

function contentText(content: ChatCompletionMessageParam['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((part) => ('text' in part ? part.text : JSON.stringify(part))).join('');
}

/** Tokens one message costs in a request: its text, its tool calls, and the chat format's overhead. */
export function countMessage(counter: TokenCounter, message: ChatCompletionMessageParam): number {
  let tokens = MESSAGE_OVERHEAD + counter.count(contentText(message.content));
  if (message.role === 'assistant' && message.tool_calls) {
    for (const call of message.tool_calls) {
      if (call.type === 'function') tokens += counter.count(call.function.name + call.function.arguments) + 3;
    }
  }
  return tokens;
}

/**
 * Tokens of the tool schemas. Servers render them into the prompt in their own way (OpenAI as a TypeScript-like
 * namespace, chat templates as JSON); the JSON text is the larger of the two, so it is what is counted.
 */
export function countTools(counter: TokenCounter, tools: readonly ChatCompletionTool[]): number {
  return tools.length === 0 ? 0 : counter.count(JSON.stringify(tools)) + 10;
}

/** What a whole request costs as counted: every message, the tool schemas and the answer's priming. */
export function countRequest(
  counter: TokenCounter,
  messages: readonly ChatCompletionMessageParam[],
  tools: readonly ChatCompletionTool[] = [],
): number {
  return (
    messages.reduce((sum, message) => sum + countMessage(counter, message), REQUEST_OVERHEAD) +
    countTools(counter, tools)
  );
}
