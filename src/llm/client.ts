import OpenAI from 'openai';
import { LlmError, RoundtableError } from '../errors.js';
import { metrics } from '../metrics.js';
import { AnswerAssembler } from './answer-assembler.js';
import { messagesWithoutControlTokens } from './control-tokens.js';
import { parseEndpoint } from './endpoint.js';
import { withReadableErrors } from './error-shapes.js';
import { PLACEHOLDER_KEY, toLlmError } from './failures.js';
import { OutputCap } from './output-cap.js';
import { readAnswer } from './read-answer.js';
import { type RetryPolicy, withRetries } from './retry.js';
import { answerCounter } from './tokens.js';
import type { LlmClient, LlmRequest, LlmResponse } from './types.js';

export type {
  CarriedFields,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  LlmClient,
  LlmRequest,
  LlmResponse,
  LlmToolCall,
} from './types.js';
export { type LlmUsage, readUsage } from './usage.js';

export interface OpenAiClientOptions {
  readonly baseURL: string;
  readonly apiKey: string | undefined;
  /** For the whole call, retries and the waits between them included, in milliseconds. */
  readonly timeoutMs: number;
  /** 429, 5xx, dropped connections and broken-off streams are retried with backoff (Retry-After honoured). */
  readonly maxRetries: number;
  /** Always stream (LLM_STREAM); otherwise only calls with an `onText` preview do. */
  readonly stream: boolean;
  /** Told before each wait for another attempt (for logs). */
  readonly onRetry?: RetryPolicy['onRetry'];
  /** Who the calls are for, in the metrics (the agent's name). */
  readonly agent?: string | undefined;
}

/** A server that refuses `stream_options` names it in its 400 (OpenAI-style "Unrecognized request argument"). */
function rejectsStreamOptions(error: LlmError): boolean {
  return (error.status === 400 || error.status === 422) && /stream_options/i.test(error.message);
}

/**
 * OpenAI's reasoning models refuse `max_tokens` and ask for `max_completion_tokens` (a 400 naming the parameter);
 * some servers refuse the newer name. Either way the 400 names the one it does not take.
 */
function refusesParam(error: LlmError, param: string): boolean {
  return (error.status === 400 || error.status === 422) && new RegExp(`\\b${param}\\b`).test(error.message);
}

/** An OpenAI-compatible endpoint through the official SDK. */
export function createOpenAiClient(options: OpenAiClientOptions): LlmClient {
  // Credentials in the URL (user:pass@, ?api-key=) are sent as headers and query, never in an error.
  const endpoint = parseEndpoint(options.baseURL);
  const client = new OpenAI({
    baseURL: endpoint.baseURL,
    // Local endpoints (Ollama, llama.cpp) need no key, but the SDK insists on one; no error ever shows it.
    apiKey: options.apiKey ?? PLACEHOLDER_KEY,
    timeout: options.timeoutMs,
    // Retries are ours (retry.ts): the SDK would wait out any Retry-After, past the time limit and past /pass.
    maxRetries: 0,
    fetch: withReadableErrors(globalThis.fetch),
    ...(Object.keys(endpoint.query).length > 0 ? { defaultQuery: endpoint.query } : {}),
    ...(endpoint.authorization ? { defaultHeaders: { Authorization: endpoint.authorization } } : {}),
  });
  // Asked for until the server refuses it once; then never again from this client.
  let askForUsage = true;
  // The output cap's name: `max_tokens` until the server asks for the other one.
  let capParam: 'max_tokens' | 'max_completion_tokens' = 'max_tokens';
  let capSwitched = false;

  async function attempt(request: LlmRequest, signal: AbortSignal): Promise<LlmResponse> {
    const stream = options.stream || request.onText !== undefined;
    const tools = request.tools ?? [];
    const toolsOffered = tools.length > 0;
    const body = {
      model: request.model,
      // Whatever built them, no message reaches the model holding a chat template's control token.
      messages: messagesWithoutControlTokens(request.messages),
      ...(toolsOffered ? { tools } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.responseFormat ? { response_format: request.responseFormat } : {}),
      ...(request.maxOutputTokens !== undefined ? { [capParam]: request.maxOutputTokens } : {}),
    };
    const usageAsked = stream && askForUsage;
    // Spending limits: the attempt's worst case is held first (a call that does not fit is not made).
    const hold = await request.meter?.reserve(request);
    try {
      // The raw response: the SDK's stream reader hides `[DONE]`, a JSON answer to a streamed request and errors
      // that are not under an `error` key; read-answer.ts sees all of them.
      const response = await (stream
        ? client.chat.completions.create(
            { ...body, stream: true, ...(usageAsked ? { stream_options: { include_usage: true } } : {}) },
            { signal },
          )
        : client.chat.completions.create(body, { signal })
      ).asResponse();
      const cap = request.maxOutputTokens;
      const answer = new AnswerAssembler(
        request.onText,
        cap === undefined ? undefined : new OutputCap(cap, answerCounter(request.model)),
      );
      const complete = await readAnswer(response, answer);
      signal.throwIfAborted();
      if (!complete && !answer.finishReason) {
        throw new LlmError("the model's answer broke off before it was complete", { retryable: true });
      }
      if (!answer.hasStarted()) throw new LlmError('the model endpoint sent an empty answer');
      const result = answer.result(toolsOffered);
      await hold?.settle(result.usage);
      return result;
    } catch (error) {
      const failure = toLlmError(error, options);
      // An error status came before the model ran: nothing was spent. Anything else may have been (a stream that
      // broke off, an answer without usage): the whole hold counts.
      if (hold) await (failure.status !== undefined && failure.status >= 400 ? hold.release() : hold.settle(undefined));
      if (usageAsked && rejectsStreamOptions(failure)) {
        askForUsage = false;
        return attempt(request, signal);
      }
      if (request.maxOutputTokens !== undefined && !capSwitched && refusesParam(failure, capParam)) {
        capSwitched = true;
        capParam = capParam === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
        return attempt(request, signal);
      }
      throw failure;
    }
  }

  return {
    async complete(request) {
      const agent = { agent: options.agent ?? request.model };
      metrics.llmCalls.inc(agent);
      const timer = metrics.llmSeconds.startTimer(agent);
      try {
        const response = await withRetries((signal) => attempt(request, signal), options, request.signal);
        for (const [kind, count] of Object.entries(response.usage ?? {}))
          metrics.llmTokens.inc({ ...agent, kind }, count);
        return response;
      } catch (error) {
        // A turn stopped by /pass, or a call a spending limit kept from being made, is not the endpoint failing.
        const refused = error instanceof RoundtableError && error.code === 'spend';
        if (!request.signal?.aborted && !refused) metrics.llmErrors.inc(agent);
        throw error;
      } finally {
        timer();
      }
    },
  };
}
