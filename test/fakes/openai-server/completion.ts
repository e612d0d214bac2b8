import { DIALECTS, type DialectTraits } from './dialects.js';
import type { FakeReply, RecordedRequest } from './types.js';

/** A reply turned into wire values: ids fixed, arguments serialised, usage estimated. */
export interface Answer {
  id: string;
  created: number;
  model: string;
  dialect: DialectTraits;
  content: string | null;
  reasoning: string | undefined;
  reasoningDetails: Array<Record<string, unknown>> | undefined;
  refusal: string | undefined;
  toolCalls: Array<{ id: string; name: string; arguments: string; extra: Record<string, unknown> | undefined }>;
  finishReason: string;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
  };
}

// Rough "4 characters a token" estimate: enough for clients that sum usage, never meant to be exact.
function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Measured prompt tokens (the OpenAI-like usage mode); the chars/4 estimate otherwise. */
export interface PromptUsage {
  readonly promptTokens: number;
  readonly cachedTokens: number;
}

export function resolveAnswer(
  reply: FakeReply,
  request: RecordedRequest,
  index: number,
  measured?: PromptUsage,
): Answer {
  const dialect = DIALECTS[reply.dialect ?? 'openai'];
  const toolCalls = (reply.toolCalls ?? []).map((call, position) => {
    // Deterministic ids so tests can match tool results to calls; an explicit id wins.
    const id = call.id ?? `call_${index}_${position}`;
    const signature = dialect.thoughtSignatures
      ? { extra_content: { google: { thought_signature: `sig-${id}` } } }
      : undefined;
    return {
      id,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      extra: call.extra ?? signature,
    };
  });
  // Real OpenAI sends `content: null` on a pure tool-call turn, and a string otherwise.
  const given = reply.agents
    ? JSON.stringify({ replies: Object.entries(reply.agents).map(([agent, text]) => ({ agent, reply: text })) })
    : reply.content;
  const whole = (toolCalls.length > 0 || reply.refusal) && !given ? null : (given ?? '');
  // The output cap the request sets: a longer answer stops there, as a real model's does.
  const capValue = request.body.max_completion_tokens ?? request.body.max_tokens;
  const cap = typeof capValue === 'number' && capValue > 0 && !reply.ignoreMaxTokens ? capValue : undefined;
  const cut = cap !== undefined && whole !== null && estimateTokens(whole) > cap;
  const content = cut && whole !== null ? whole.slice(0, cap * 4) : whole;
  const completionText = (content ?? '') + toolCalls.map((call) => call.name + call.arguments).join('');
  const prompt_tokens =
    measured?.promptTokens ?? estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.tools ?? []));
  const completion_tokens = estimateTokens(completionText);
  return {
    id: `chatcmpl-fake-${index}`,
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    dialect,
    content,
    reasoning: reply.reasoning,
    reasoningDetails: reply.reasoningDetails,
    refusal: reply.refusal,
    toolCalls,
    finishReason: reply.finishReason ?? (cut ? 'length' : toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: {
      prompt_tokens,
      completion_tokens,
      total_tokens: prompt_tokens + completion_tokens,
      ...(measured ? { prompt_tokens_details: { cached_tokens: measured.cachedTokens } } : {}),
    },
  };
}

/** The non-streamed `chat.completion` object. */
export function completionBody(answer: Answer): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: answer.content,
    refusal: answer.refusal ?? null,
  };
  if (answer.reasoning !== undefined && answer.dialect.thinkingParts) {
    message.content = [thinkingPart(answer.reasoning), ...(answer.content ? [textPart(answer.content)] : [])];
  } else if (answer.reasoning !== undefined) {
    message[answer.dialect.reasoningField] = answer.reasoning;
  }
  if (answer.reasoningDetails) message.reasoning_details = answer.reasoningDetails.map((d, index) => ({ ...d, index }));
  if (answer.toolCalls.length > 0) {
    message.tool_calls = answer.toolCalls.map((call) => ({
      ...call.extra,
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: answer.id,
    object: 'chat.completion',
    created: answer.created,
    model: answer.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    usage: answer.usage,
    system_fingerprint: null,
  };
}

/** Mistral's content parts: reasoning, and the reply. */
export function thinkingPart(text: string): Record<string, unknown> {
  return { type: 'thinking', thinking: [{ type: 'text', text }] };
}

export function textPart(text: string): Record<string, unknown> {
  return { type: 'text', text };
}

const errorDefaults: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: { type: 'invalid_request_error', code: 'invalid_api_key', message: 'Incorrect API key provided.' },
  403: { type: 'permission_error', code: null, message: 'You are not allowed to sample from this model.' },
  404: { type: 'invalid_request_error', code: 'model_not_found', message: 'The model does not exist.' },
  429: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for requests.' },
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  503: { type: 'server_error', code: null, message: 'The engine is currently overloaded, please try again later.' },
};

function defaultsFor(status: number): { type: string; code: string | null; message: string } {
  return (
    errorDefaults[status] ?? {
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: null,
      message: `Fake error with status ${status}.`,
    }
  );
}

/** The error body a dialect's server sends with an HTTP error status. */
export function dialectErrorBody(dialect: DialectTraits, status: number, message?: string): unknown {
  const defaults = defaultsFor(status);
  return dialect.errorBody(status, message ?? defaults.message, defaults.type);
}

/** OpenAI-style error body, `{ error: { message, type, param, code } }`. */
export function errorBody(status: number, message?: string, code?: string | null): Record<string, unknown> {
  const defaults = defaultsFor(status);
  return {
    error: {
      message: message ?? defaults.message,
      type: defaults.type,
      param: null,
      code: code === undefined ? defaults.code : code,
    },
  };
}
