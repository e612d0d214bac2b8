import OpenAI from 'openai';
import { LlmError } from '../errors.js';

/** Turns texts into vectors (one per text, in order); `meter` holds each call's cost first (spending limits). */
export interface Embedder {
  readonly model: string;
  embed(texts: readonly string[], meter?: EmbedMeter): Promise<Float32Array[]>;
}

/** Spending limits' side of an embeddings call: held before it is made, settled with the tokens it took. */
export interface EmbedMeter {
  /** Rejects (with the limit it would cross) when the call does not fit. */
  reserve(texts: readonly string[]): Promise<{
    settle(tokens: number | undefined): Promise<void>;
    release(): Promise<void>;
  }>;
}

/** Inputs per `/v1/embeddings` call, unless told otherwise (EMBEDDINGS_BATCH). */
const BATCH = 64;
/** Characters of a message that are embedded: the gist, not a whole pasted file. */
export const EMBED_CHARS = 2000;

/** An OpenAI-compatible `/v1/embeddings` endpoint through the official SDK, batched. */
export function createEmbedder(options: {
  readonly baseURL: string;
  readonly apiKey: string | undefined;
  readonly model: string;
  readonly timeoutMs: number;
  /** Inputs per call. */
  readonly batch?: number | undefined;
}): Embedder {
  const batch = options.batch ?? BATCH;
  const client = new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey ?? 'no-key',
    timeout: options.timeoutMs,
    maxRetries: 1,
  });
  return {
    model: options.model,
    async embed(texts, meter) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batch) {
        const input = texts.slice(start, start + batch).map((text) => text.slice(0, EMBED_CHARS) || ' ');
        const hold = await meter?.reserve(input);
        let response: Awaited<ReturnType<typeof client.embeddings.create>>;
        try {
          // Floats, not the SDK's default base64: every OpenAI-compatible server (vLLM, llama.cpp, Ollama) speaks it.
          response = await client.embeddings.create({ model: options.model, input, encoding_format: 'float' });
        } catch (error) {
          const status = (error as { status?: unknown }).status;
          await (typeof status === 'number' && status >= 400 ? hold?.release() : hold?.settle(undefined));
          throw error;
        }
        const tokens = Number(response.usage?.prompt_tokens);
        await hold?.settle(Number.isFinite(tokens) ? tokens : undefined);
        const data = [...response.data].sort((a, b) => a.index - b.index);
        if (data.length !== input.length) {
          throw new LlmError(`the embeddings endpoint answered ${data.length} vectors for ${input.length} texts`);
        }
        for (const item of data) vectors.push(Float32Array.from(item.embedding));
      }
      return vectors;
    },
  };
}
