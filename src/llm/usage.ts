/** Token counts a server reported for one call (`usage`); cached is the part of input served from its prompt cache. */
export interface LlmUsage {
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

/** Reads an OpenAI-shaped `usage` object; undefined when absent or not numeric. */
export function readUsage(raw: unknown): LlmUsage | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const usage = raw as {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
  };
  const input = Number(usage.prompt_tokens);
  const output = Number(usage.completion_tokens);
  if (!Number.isFinite(input) || !Number.isFinite(output)) return undefined;
  const cached = Number(usage.prompt_tokens_details?.cached_tokens ?? 0);
  return { input, cached: Number.isFinite(cached) ? cached : 0, output };
}
