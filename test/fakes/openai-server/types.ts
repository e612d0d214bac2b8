import type { Dialect } from './dialects.js';

export type { Dialect };

/** One tool call the fake model makes; `arguments` given as a string is sent verbatim (e.g. to test malformed JSON). */
export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  id?: string;
  /** Extra fields of the call object, e.g. `extra_content` (the gemini dialect adds a thought signature itself). */
  extra?: Record<string, unknown>;
}

/** What the fake model answers to one chat completion request. */
export interface FakeReply {
  /** Assistant text; may be empty when `toolCalls` are given. */
  content?: string;
  /** A batched request's structured answer: one string per agent, sent as the `{ replies: [{ agent, reply }] }` its schema asks for. */
  agents?: Record<string, string>;
  toolCalls?: FakeToolCall[];
  /** Answer with this HTTP error status instead, and an OpenAI-style error body. */
  status?: number;
  /** Message of the error body sent with `status`; a default per status otherwise. */
  errorMessage?: string;
  /** Seconds (fractions allowed); sets the Retry-After header of an error answer. */
  retryAfter?: number;
  /** Wait this long before answering; if the client disconnects meanwhile, stop quietly. */
  delayMs?: number;
  /** Stream with this many milliseconds between chunks (a reply that takes a while to be written). */
  chunkDelayMs?: number;
  /** Never answer until the client disconnects (for timeout and abort tests). */
  hang?: boolean;
  /** Send headers and the start of the body (or one stream chunk), then stall until the client disconnects. */
  stallAfterHeaders?: boolean;
  /** Which real server's shapes to speak (tool-call deltas, reasoning field, error bodies, usage); default 'openai'. */
  dialect?: Dialect;
  /** Reasoning text, sent in the dialect's reasoning field (`reasoning_content` or `reasoning`). */
  reasoning?: string;
  /** OpenRouter's `reasoning_details`; streamed with each `text` in pieces. */
  reasoningDetails?: Array<Record<string, unknown>>;
  /** A refusal (`message.refusal` / `delta.refusal`), with no content. */
  refusal?: string;
  /** Overrides the finish reason, e.g. 'length' for an answer cut off at the output limit. */
  finishReason?: string;
  /** Answer a streamed request with a plain JSON completion, as servers that ignore `stream: true` do. */
  ignoreStream?: boolean;
  /** Write the whole reply whatever `max_tokens` the request sets, and report all of it, as some servers do. */
  ignoreMaxTokens?: boolean;
  /** Stream this many chunks, then end the response: no finish_reason, no `[DONE]`. */
  breakOffAfter?: number;
  /** Stream this many chunks, then drop the connection. */
  dropConnectionAfter?: number;
  /** Stream this many chunks, then send an error in the dialect's mid-stream shape (or as `event: error`) and end. */
  streamError?: { message: string; code?: number | string; afterChunks?: number; asEvent?: boolean };
  /** Answer 200 with the dialect's error body (OpenRouter reports upstream failures this way). */
  errorIn200?: { message: string; code?: number | string };
  /** Answer 200 with `choices: []`. */
  noChoices?: boolean;
  /** A stream with nothing in it but `[DONE]`. */
  emptyStream?: boolean;
  /** Stream exactly these deltas, one chunk each (a recorded server's payload), then `finishReason` (default 'stop'). */
  deltas?: Array<Record<string, unknown>>;
}

/** A chat completion request as the fake received it. */
export interface RecordedRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string; name?: string }>;
  tools: unknown[] | undefined;
  stream: boolean;
  /** The request's path and query, as sent (`/v1/chat/completions?api-version=...`). */
  url: string;
  /** Lower-cased header names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** When the answer's first piece of text was written to a stream (ms since the epoch, with fractions). */
  firstContentAt?: number;
}

/** Decides the reply to a request; `index` is the request's position in `FakeOpenAI.requests`. */
export type Responder = (request: RecordedRequest, index: number) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAI {
  /** 'http://127.0.0.1:PORT/v1', ready for `new OpenAI({ baseURL })`. */
  readonly baseURL: string;
  /** Every chat completion request, in arrival order (index = position). */
  readonly requests: RecordedRequest[];
  /** Every `/v1/embeddings` request: its model and inputs. */
  readonly embeddingRequests: ReadonlyArray<{ model: string; input: string[] }>;
  /** Answer `/v1/embeddings` with this error status from now on (undefined: answer normally again). */
  failEmbeddings(status: number | undefined): void;
  /** Answer each `/v1/embeddings` request this many ms late from now on (0: at once). */
  delayEmbeddings(ms: number): void;
  /** Replace the fallback responder, used when the model's script queue is empty. */
  respond(responder: Responder): void;
  /** Append replies to a per-model FIFO queue, consumed before the responder. */
  script(model: string, ...replies: FakeReply[]): void;
  /** Close the server and every open socket; pending hung or delayed requests end. */
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  responder?: Responder;
  /**
   * The models the server has, as it names them (Ollama: `llama3.2:latest`). `GET /v1/models` lists exactly these,
   * and a chat completion for any other model answers 404 (`name` finds `name:latest`, as on Ollama). Unset: every
   * model answers, and the list holds the models scripted or asked for so far.
   */
  models?: readonly string[];
  /** `owned_by` of each listed model: `openai`, `library` (Ollama), `llamacpp` (llama.cpp: one model, any name). */
  modelOwner?: string;
  /** Request parameters the server refuses with a 400 (`stream_options` on servers that do not know it). */
  unsupportedParams?: string[];
  /**
   * Models that refuse `max_tokens` as OpenAI's reasoning models do (a 400 asking for `max_completion_tokens`).
   * Every model honours the cap it is given: a longer answer is cut to it, with finish_reason `length`.
   */
  reasoningModels?: readonly string[];
  /**
   * `estimate` (default): prompt tokens are characters / 4. `openai`: real o200k counts, and cached tokens by
   * OpenAI's prompt-cache rule (the longest prefix shared with an earlier request, 1024 tokens on, 128 a step).
   */
  usage?: 'estimate' | 'openai';
  /**
   * With OpenAI-like usage, where a structured output's schema goes: `prefix` (default) before the system message,
   * as OpenAI documents (a different schema misses the cache); `grammar` outside the prompt, as servers that
   * enforce it with a grammar (llama.cpp, vLLM, Ollama) do.
   */
  schema?: 'prefix' | 'grammar';
}
