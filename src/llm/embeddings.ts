import OpenAI from 'openai';
import { LlmError } from '../errors.js';

/** Turns texts into vectors (one per text, in order). */
export interface Embedder {
  readonly model: string;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Inputs per `/v1/embeddings` call. */
const BATCH = 64;
/** Characters of a message that are embedded: the gist, not a whole pasted file. */
export const EMBED_CHARS = 2000;

/** An OpenAI-compatible `/v1/embeddings` endpoint through the official SDK, batched. */
export function createEmbedder(options: {
  readonly baseURL: string;
  readonly apiKey: string | undefined;
  readonly model: string;
  readonly timeoutMs: number;
}): Embedder {
  const client = new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey ?? 'no-key',
    timeout: options.timeoutMs,
    maxRetries: 1,
  });
  return {
    model: options.model,
    async embed(texts) {
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += BATCH) {
        const input = texts.slice(start, start + BATCH).map((text) => text.slice(0, EMBED_CHARS) || ' ');
        // Floats, not the SDK's default base64: every OpenAI-compatible server (vLLM, llama.cpp, Ollama) speaks it.
        const response = await client.embeddings.create({ model: options.model, input, encoding_format: 'float' });
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
