import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { LlmError } from '../errors.js';
import { metrics } from '../metrics.js';

export type { ChatCompletionMessageParam, ChatCompletionTool };

export interface LlmToolCall {
  readonly id: string;
  readonly name: string;
  /** Raw JSON text as the model produced it. */
  readonly arguments: string;
}

export interface LlmRequest {
  readonly model: string;
  readonly messages: ChatCompletionMessageParam[];
  readonly tools?: ChatCompletionTool[] | undefined;
  readonly temperature?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Called with the text so far while a streamed answer arrives (forces streaming for this call). */
  readonly onText?: ((textSoFar: string) => void) | undefined;
}

/** Token counts a server reported for one call (`usage`); cached is the part of input served from its prompt cache. */
export interface LlmUsage {
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

export interface LlmResponse {
  readonly content: string;
  readonly toolCalls: readonly LlmToolCall[];
  /** What the server reported, when it did. */
  readonly usage?: LlmUsage | undefined;
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

/** The seam the tool loop talks to; tests may pass their own. */
export interface LlmClient {
  complete(request: LlmRequest): Promise<LlmResponse>;
}

export interface OpenAiClientOptions {
  readonly baseURL: string;
  readonly apiKey: string | undefined;
  /** Per attempt, in milliseconds. */
  readonly timeoutMs: number;
  /** 429 and 5xx are retried with backoff (Retry-After honoured) this many times. */
  readonly maxRetries: number;
  /** Use SSE streaming. */
  readonly stream: boolean;
  /** Who the calls are for, in the metrics (the agent's name). */
  readonly agent?: string | undefined;
}

/** Sent when no key is configured; an error never shows it (it would read as a key the user set). */
const PLACEHOLDER_KEY = 'roundtable-no-api-key';

/** An OpenAI-compatible endpoint through the official SDK. */
export function createOpenAiClient(options: OpenAiClientOptions): LlmClient {
  const client = new OpenAI({
    baseURL: options.baseURL,
    // Local endpoints (Ollama, llama.cpp) need no key, but the SDK insists on one.
    apiKey: options.apiKey ?? PLACEHOLDER_KEY,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
  });
  const llm = {
    async complete(request: LlmRequest): Promise<LlmResponse> {
      const agent = { agent: options.agent ?? request.model };
      metrics.llmCalls.inc(agent);
      const timer = metrics.llmSeconds.startTimer(agent);
      try {
        const response = await llm.deadline(request);
        for (const [kind, count] of Object.entries(response.usage ?? {})) {
          metrics.llmTokens.inc({ ...agent, kind }, count);
        }
        return response;
      } catch (error) {
        // A turn stopped by /pass is not the endpoint failing.
        if (!request.signal?.aborted) metrics.llmErrors.inc(agent);
        throw error;
      } finally {
        timer();
      }
    },
    async deadline(request: LlmRequest): Promise<LlmResponse> {
      // The SDK's own timeout stops once headers arrive; this one also covers a body or stream that
      // stalls after them, and the SDK's retries: one limit for the whole call.
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
      try {
        return await llm.attempt(request, signal);
      } catch (error) {
        if (deadline.aborted && !request.signal?.aborted) {
          throw new LlmError(`the model did not answer within ${Math.round(options.timeoutMs / 1000)} s`, {
            cause: error,
          });
        }
        throw error;
      }
    },
    async attempt(request: LlmRequest, signal: AbortSignal): Promise<LlmResponse> {
      const body = {
        model: request.model,
        messages: request.messages,
        ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      };
      const requestOptions = { signal };
      try {
        if (!options.stream && !request.onText) {
          const completion = await client.chat.completions.create(body, requestOptions);
          const message = completion.choices[0]?.message;
          const usage = readUsage(completion.usage);
          return {
            ...(usage ? { usage } : {}),
            content: message?.content ?? '',
            toolCalls: (message?.tool_calls ?? [])
              .filter((call) => call.type === 'function')
              .map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })),
          };
        }
        const stream = await client.chat.completions.create({ ...body, stream: true }, requestOptions);
        let content = '';
        const calls: Array<{ id: string; name: string; arguments: string }> = [];
        let usage: LlmUsage | undefined;
        for await (const chunk of stream) {
          usage = readUsage(chunk.usage) ?? usage;
          const delta = chunk.choices[0]?.delta;
          if (!delta) continue;
          if (delta.content) {
            content += delta.content;
            request.onText?.(content);
          }
          for (const part of delta.tool_calls ?? []) {
            const call = calls[part.index] ?? { id: '', name: '', arguments: '' };
            calls[part.index] = call;
            if (part.id) call.id = part.id;
            if (part.function?.name) call.name += part.function.name;
            if (part.function?.arguments) call.arguments += part.function.arguments;
          }
        }
        // The SDK ends a stream quietly when it is aborted: that is not a complete answer.
        signal.throwIfAborted();
        return { content, toolCalls: calls.filter(Boolean), ...(usage ? { usage } : {}) };
      } catch (error) {
        throw toLlmError(error, options);
      }
    },
  };
  return llm;
}

function toLlmError(error: unknown, options: OpenAiClientOptions): LlmError {
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new LlmError(`the model did not answer within ${Math.round(options.timeoutMs / 1000)} s`, { cause: error });
  }
  if (error instanceof OpenAI.APIUserAbortError) return new LlmError('stopped', { cause: error });
  if (error instanceof OpenAI.APIConnectionError) {
    return new LlmError(`cannot reach the model endpoint ${options.baseURL}`, { cause: error });
  }
  if (error instanceof OpenAI.APIError) {
    const retryAfter = Number(error.headers?.get?.('retry-after'));
    const said =
      !options.apiKey && (error.status === 401 || error.status === 403)
        ? 'it wants an API key: set OPENAI_API_KEY (or api_key_env in the agent file)'
        : firstLine(error.message)
            .replace(/^\d{3}\s+/, '')
            .split(PLACEHOLDER_KEY)
            .join('(none set)');
    return new LlmError(`the model endpoint answered ${error.status ?? 'an error'}: ${said}`, {
      ...(error.status !== undefined ? { status: error.status } : {}),
      ...(Number.isFinite(retryAfter) ? { retryAfterMs: retryAfter * 1000 } : {}),
      cause: error,
    });
  }
  return new LlmError(firstLine(error instanceof Error ? error.message : String(error)), { cause: error });
}

function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '').slice(0, 200);
}
