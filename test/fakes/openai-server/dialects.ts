// The ways real OpenAI-compatible servers differ on the wire, as their public documentation and known behaviour
// describe them. A reply picks one with `dialect`; 'openai' is the textbook shape.

export type Dialect =
  | 'openai'
  | 'ollama'
  | 'ollama-old'
  | 'litellm'
  | 'llamacpp'
  | 'vllm'
  | 'lmstudio'
  | 'gemini'
  | 'openrouter'
  | 'groq'
  | 'mistral';

export interface DialectTraits {
  /**
   * How streamed tool calls arrive: `pieces` (OpenAI: id and name first, keyed by index, then arguments in pieces),
   * `whole` (each call in one delta, with its own index), `whole-same-index` (Ollama, LiteLLM: `index: 0` for every
   * call), `whole-no-index` (Gemini, older Ollama: no index at all).
   */
  readonly toolCallDeltas: 'pieces' | 'whole' | 'whole-same-index' | 'whole-no-index';
  /** The field reasoning text comes in. */
  readonly reasoningField: 'reasoning_content' | 'reasoning';
  /** The body of an HTTP error answer (also of a 200 that carries an error, OpenRouter). */
  errorBody(status: number, message: string, type: string): unknown;
  /** The data of an error sent inside a stream. */
  streamError(message: string, code: number | string): unknown;
  /** Groq reports a stream's usage in `x_groq.usage` on the last chunk, whatever `stream_options` says. */
  readonly usageInXGroq?: boolean;
  /** OpenRouter keeps a stream open with SSE comments while the upstream provider thinks. */
  readonly keepAliveComments?: boolean;
  /** Gemini attaches a thought signature to each tool call, to be sent back with the results. */
  readonly thoughtSignatures?: boolean;
  /**
   * Mistral's reasoning models send `content` as a list of parts, in a whole answer and in stream deltas: reasoning
   * as `{type: "thinking", thinking: [{type: "text", text}]}`, the reply as `{type: "text", text}`.
   */
  readonly thinkingParts?: boolean;
}

const openAiError = (status: number, message: string, type: string): unknown => ({
  error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null },
});
const ollamaError = (_status: number, message: string): unknown => ({ error: message });

export const DIALECTS: Record<Dialect, DialectTraits> = {
  openai: {
    toolCallDeltas: 'pieces',
    reasoningField: 'reasoning_content',
    errorBody: openAiError,
    streamError: (message, code) => ({ error: { message, type: 'server_error', param: null, code } }),
  },
  ollama: {
    toolCallDeltas: 'whole-same-index',
    reasoningField: 'reasoning',
    errorBody: ollamaError,
    streamError: (message) => ({ error: message }),
  },
  'ollama-old': {
    toolCallDeltas: 'whole-no-index',
    reasoningField: 'reasoning',
    errorBody: ollamaError,
    streamError: (message) => ({ error: message }),
  },
  litellm: {
    toolCallDeltas: 'whole-same-index',
    reasoningField: 'reasoning_content',
    // LiteLLM's proxy stringifies every field of its error, the status code too.
    errorBody: (status, message) => ({ error: { message, type: 'None', param: 'None', code: String(status) } }),
    streamError: (message, code) => ({ error: { message, type: 'None', param: 'None', code: String(code) } }),
  },
  llamacpp: {
    toolCallDeltas: 'pieces',
    reasoningField: 'reasoning_content',
    errorBody: (status, message, type) => ({ error: { code: status, message, type } }),
    streamError: (message, code) => ({ error: { code, message, type: 'server_error' } }),
  },
  vllm: {
    toolCallDeltas: 'pieces',
    reasoningField: 'reasoning',
    errorBody: (status, message) => ({ object: 'error', message, type: 'BadRequestError', param: null, code: status }),
    streamError: (message, code) => ({ object: 'error', message, type: 'InternalServerError', param: null, code }),
  },
  lmstudio: {
    toolCallDeltas: 'pieces',
    reasoningField: 'reasoning_content',
    errorBody: ollamaError,
    streamError: (message) => ({ error: message }),
  },
  gemini: {
    toolCallDeltas: 'whole-no-index',
    reasoningField: 'reasoning_content',
    // Gemini's OpenAI endpoint wraps its error in a one-element list.
    errorBody: (status, message) => [{ error: { code: status, message, status: 'INVALID_ARGUMENT' } }],
    streamError: (message, code) => ({ error: { code, message, status: 'INTERNAL' } }),
    thoughtSignatures: true,
  },
  openrouter: {
    toolCallDeltas: 'pieces',
    reasoningField: 'reasoning',
    errorBody: (status, message) => ({ error: { message, code: status, metadata: { provider_name: 'Upstream' } } }),
    // Mid-stream: a chunk with the error beside its choices, finish_reason "error".
    streamError: (message, code) => ({
      id: 'gen-fake',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'openrouter/fake',
      error: { code, message },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
    }),
    keepAliveComments: true,
  },
  mistral: {
    toolCallDeltas: 'whole',
    reasoningField: 'reasoning_content',
    errorBody: (_status, message, type) => ({ object: 'error', message, type, param: null, code: null }),
    streamError: (message) => ({ object: 'error', message, type: 'internal_server_error', param: null, code: null }),
    thinkingParts: true,
  },
  groq: {
    toolCallDeltas: 'whole',
    reasoningField: 'reasoning',
    errorBody: openAiError,
    streamError: (message, code) => ({ error: { message, type: 'internal_server_error', code } }),
    usageInXGroq: true,
  },
};
