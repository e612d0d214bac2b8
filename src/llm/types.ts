import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import type { LlmUsage } from './usage.js';

export type { ChatCompletionMessageParam, ChatCompletionTool };

/** Provider fields that must travel back to the server unchanged (reasoning state, thought signatures). */
export type CarriedFields = Readonly<Record<string, unknown>>;

export interface LlmToolCall {
  readonly id: string;
  readonly name: string;
  /** Raw JSON text as the model produced it. */
  readonly arguments: string;
  /** Extra fields of the call as the server sent them, e.g. Gemini's `extra_content.google.thought_signature`. */
  readonly carry?: CarriedFields | undefined;
}

export interface LlmRequest {
  readonly model: string;
  readonly messages: ChatCompletionMessageParam[];
  readonly tools?: ChatCompletionTool[] | undefined;
  readonly temperature?: number | undefined;
  /** Structured output: the answer must follow this JSON schema (batched turns). */
  readonly responseFormat?: ResponseFormatJSONSchema | undefined;
  readonly signal?: AbortSignal | undefined;
  /**
   * Called with the visible text so far while a streamed answer arrives. Passing it asks for a stream: pass it only
   * when a preview will really be shown.
   */
  readonly onText?: ((textSoFar: string) => void) | undefined;
  /** The answer's cap in tokens, sent as `max_tokens` (`max_completion_tokens` where the endpoint wants that). */
  readonly maxOutputTokens?: number | undefined;
  /** Holds each attempt's worst-case cost before it is made, and settles it after (spending limits). */
  readonly meter?: CallMeter | undefined;
}

/** Spending limits' side of a call: each attempt (retries included) is held before it is made. */
export interface CallMeter {
  /** Holds the attempt's worst case; rejects (with the limit it would cross) when it does not fit. */
  reserve(request: LlmRequest): Promise<CallHold>;
}

export interface CallHold {
  /** The attempt ran: what the server reported (undefined: not known, so the whole hold is spent). */
  settle(usage: LlmUsage | undefined): Promise<void>;
  /** The endpoint refused the attempt before the model ran (an error status): it cost nothing. */
  release(): Promise<void>;
}

export interface LlmResponse {
  /** What the model said: reasoning and tool-call markup taken out, a note appended when it was cut off. */
  readonly content: string;
  readonly toolCalls: readonly LlmToolCall[];
  /** What the server reported, when it did (for an answer cut at its cap, the output is the cap). */
  readonly usage?: LlmUsage | undefined;
  /** True when the client cut the answer at its output cap: the server wrote on past it (it ignored `max_tokens`). */
  readonly cutAtCap?: boolean | undefined;
  /** The output tokens a server that ignored the cap reported writing, when the answer was cut at the cap. */
  readonly outputOverrun?: number | undefined;
  /** The model's reasoning (`reasoning_content` / `reasoning` fields, `<think>` blocks), never part of content. */
  readonly reasoning?: string | undefined;
  /** Why the model stopped, as the server said: 'stop', 'tool_calls', 'length', ... */
  readonly finishReason?: string | undefined;
  /** Fields of the assistant message to send back with the tool results (reasoning_content, reasoning_details, ...). */
  readonly carry?: CarriedFields | undefined;
}

/** The seam the tool loop talks to; tests may pass their own. */
export interface LlmClient {
  complete(request: LlmRequest): Promise<LlmResponse>;
}
