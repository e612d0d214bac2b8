import OpenAI from 'openai';
import { LlmError } from '../errors.js';
import { redactUrl } from '../secrets.js';
import { firstLine, type WireError } from './error-shapes.js';

export interface Endpoint {
  readonly baseURL: string;
  readonly timeoutMs: number;
  /** The configured key, if any: a 401 without one says to set it. */
  readonly apiKey?: string | undefined;
}

/** Sent when no key is configured; an error never shows it (it would read as a key the user set). */
export const PLACEHOLDER_KEY = 'roundtable-no-api-key';

/** A server's words, without the placeholder key some echo back. */
function withoutPlaceholder(text: string): string {
  return text.split(PLACEHOLDER_KEY).join('(none set)');
}

/** The statuses worth another try, as the SDK itself would retry them: 408, 409, 429 and 5xx. */
export function retryableStatus(status: number | undefined): boolean {
  return status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500);
}

/** `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function readRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

export function timeoutError(endpoint: Endpoint, cause?: unknown): LlmError {
  return new LlmError(`the model did not answer within ${Math.round(endpoint.timeoutMs / 1000)} s`, { cause });
}

/** An error the server put in a body (a 200 answer, or an event of a stream) as one short line. */
export function wireLlmError(wire: WireError): LlmError {
  const detail = withoutPlaceholder(firstLine(wire.message));
  return new LlmError(
    wire.status
      ? `the model endpoint answered ${wire.status}: ${detail}`
      : `the model endpoint reported an error: ${detail}`,
    { ...(wire.status ? { status: wire.status } : {}), retryable: retryableStatus(wire.status) },
  );
}

/** Any failure of a call, as one short readable LlmError that says whether another attempt may help. */
export function toLlmError(error: unknown, endpoint: Endpoint): LlmError {
  if (error instanceof LlmError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return timeoutError(endpoint, error);
  if (error instanceof OpenAI.APIUserAbortError) return new LlmError('stopped', { cause: error });
  if (error instanceof OpenAI.APIConnectionError) {
    return new LlmError(`cannot reach the model endpoint ${redactUrl(endpoint.baseURL)}`, {
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof OpenAI.APIError) {
    const retryAfterMs = readRetryAfter(error.headers);
    const said =
      !endpoint.apiKey && (error.status === 401 || error.status === 403)
        ? 'it wants an API key: set OPENAI_API_KEY (or api_key_env in the agent file)'
        : withoutPlaceholder(firstLine(error.message).replace(/^\d{3}\s+/, ''));
    return new LlmError(`the model endpoint answered ${error.status ?? 'an error'}: ${said}`, {
      ...(error.status !== undefined ? { status: error.status } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      retryable: retryableStatus(error.status),
      cause: error,
    });
  }
  // undici ends a body whose connection closed mid-way with `TypeError: terminated`.
  if (error instanceof TypeError && error.message === 'terminated') {
    return new LlmError('the connection to the model endpoint broke off mid-answer', { retryable: true, cause: error });
  }
  return new LlmError(firstLine(error instanceof Error ? error.message : String(error)), { cause: error });
}
