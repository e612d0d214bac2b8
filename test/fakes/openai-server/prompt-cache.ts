import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

type Encode = (text: string, options: { disallowedSpecial: Set<string> }) => number[];
let encoder: Encode | undefined;
// Loaded on first use: the rank table takes a moment, and most users of the fake never ask for OpenAI-like usage.
const encode: Encode = (text, options) => {
  encoder ??= (createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/o200k_base') as { encode: Encode }).encode;
  return encoder(text, options);
};

type Request = {
  messages: ReadonlyArray<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>;
  tools?: unknown[] | undefined;
  body?: Record<string, unknown> | undefined;
};

/** Where a structured output's schema goes (see FakeOpenAIOptions.schema). */
export type SchemaPlacement = 'prefix' | 'grammar';

/**
 * The prompt as a server sees it, one text: the tool schemas first (the order Anthropic documents for its cache:
 * tools, system, messages; OpenAI puts them after the system text) and a structured output's schema (OpenAI: "the
 * structured output schema serves as a prefix to the system message"; a server that enforces it with a grammar
 * leaves it out of the prompt), then every message with its role.
 */
export function promptText(request: Request, schema: SchemaPlacement = 'prefix'): string {
  const format = schema === 'prefix' ? request.body?.response_format : undefined;
  const tools =
    (request.tools && request.tools.length > 0 ? `<|tools|>${JSON.stringify(request.tools)}` : '') +
    (format ? `<|response_format|>${JSON.stringify(format)}` : '');
  const messages = request.messages.map((m) => {
    const content = typeof m.content === 'string' ? m.content : m.content == null ? '' : JSON.stringify(m.content);
    const calls = m.tool_calls ? JSON.stringify(m.tool_calls) : '';
    return `<|${m.role}${m.tool_call_id ? ` ${m.tool_call_id}` : ''}|>${content}${calls}`;
  });
  return tools + messages.join('');
}

/** OpenAI's rule: prompts of 1024 tokens or more are cached, in steps of 128 tokens. */
const FIRST_BLOCK = 1024;
const STEP = 128;

/**
 * OpenAI-style prompt caching: a request's cached tokens are the longest prefix, in 128-token steps from 1024 on,
 * that it shares with an earlier request (any model, any agent: the cache is keyed by the prefix alone).
 */
export class PromptCache {
  private readonly seen = new Set<string>();

  constructor(private readonly schema: SchemaPlacement = 'prefix') {}

  /** Counts the request's prompt tokens and how many of them an earlier request had cached. */
  measure(request: Request): { promptTokens: number; cachedTokens: number } {
    const tokens = encode(promptText(request, this.schema), { disallowedSpecial: new Set() });
    const hash = createHash('sha256');
    let hashed = 0;
    let cached = 0;
    let missed = false;
    for (let end = FIRST_BLOCK; end <= tokens.length; end += STEP) {
      hash.update(Uint32Array.from(tokens.slice(hashed, end)));
      hashed = end;
      const key = hash.copy().digest('hex');
      // Every boundary of every request is stored, so a miss here means every longer prefix misses too.
      if (!missed && this.seen.has(key)) cached = end;
      else missed = true;
      this.seen.add(key);
    }
    return { promptTokens: tokens.length, cachedTokens: cached };
  }
}

/** The longest common prefix of two strings, in characters. */
function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let i = 0;
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Of all the input characters of `requests`, the share that repeats a prefix of an earlier request: what a
 * provider's prompt cache could reuse at best.
 */
export function repeatedPrefixShare(requests: readonly Request[], schema: SchemaPlacement = 'prefix'): number {
  const texts = requests.map((request) => promptText(request, schema));
  let repeated = 0;
  let total = 0;
  texts.forEach((text, index) => {
    total += text.length;
    let best = 0;
    for (let earlier = 0; earlier < index; earlier++) best = Math.max(best, commonPrefix(text, texts[earlier] ?? ''));
    repeated += best;
  });
  return total === 0 ? 0 : repeated / total;
}
