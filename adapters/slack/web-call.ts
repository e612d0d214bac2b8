import { setTimeout as sleep } from 'node:timers/promises';
import { AdapterError, describeError } from '../../src/errors.js';
import { SLACK } from './inbound.js';

/** The WebClient settings every Slack client here uses (Web API base, no blind retries). */
export function webClientOptions(apiUrl: string | undefined): {
  slackApiUrl: string;
  retryConfig: { retries: number };
  rejectRateLimitedCalls: boolean;
  timeout: number;
} {
  const base = apiUrl ?? 'https://slack.com/api/';
  return {
    // Bolt joins method names onto this base, so it must end with a slash.
    slackApiUrl: base.endsWith('/') ? base : `${base}/`,
    // A connection error after Slack accepted chat.postMessage must not post twice: no automatic retries.
    retryConfig: { retries: 0 },
    // 429s come back to us as errors carrying Retry-After; `withRateLimitRetry` waits and retries them.
    rejectRateLimitedCalls: true,
    timeout: 30_000,
  };
}

interface RateLimited {
  code: 'slack_webapi_rate_limited_error';
  retryAfter: number;
}

/** Slack answered 429: it did not perform the call. */
export function isRateLimited(error: unknown): error is RateLimited {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === 'slack_webapi_rate_limited_error' &&
    typeof (error as { retryAfter?: unknown }).retryAfter === 'number'
  );
}

/**
 * Runs a Web API call; on 429 only, waits Retry-After seconds and tries again (a 429
 * means Slack did not perform the call, so retrying cannot duplicate it). Anything
 * else is thrown at once.
 */
export async function withRateLimitRetry<T>(
  call: () => Promise<T>,
  options: { maxRetries?: number; signal?: AbortSignal | undefined } = {},
): Promise<T> {
  const maxRetries = options.maxRetries ?? 5;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isRateLimited(error) || attempt >= maxRetries) throw error;
      await sleep(error.retryAfter * 1000, undefined, options.signal ? { signal: options.signal } : {});
    }
  }
}

/** Slack's own errors (`ok: false`) that say "try again later", not "no". */
const PASSING_ERRORS = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
]);

/**
 * Whether a failed Web API call is worth another try: Slack answered 5xx, 408 or 429, said `internal_error`,
 * `fatal_error`, `service_unavailable` or `request_timeout`, or the request never got an answer. Any other refusal
 * (`channel_not_found`, `not_in_channel`, `is_archived`, `missing_scope`, `invalid_auth`, `msg_too_long`, 4xx)
 * would be refused again.
 */
export function callRetryable(error: unknown): boolean {
  const failure = error as { code?: unknown; statusCode?: unknown; data?: { error?: unknown } } | null;
  switch (failure?.code) {
    case 'slack_webapi_platform_error':
      return PASSING_ERRORS.has(String(failure.data?.error));
    case 'slack_webapi_http_error': {
      const status = Number(failure.statusCode);
      return status >= 500 || status === 429 || status === 408;
    }
    default:
      // Rate limited past our own retries, a request that got no answer, or something unforeseen.
      return true;
  }
}

/** Slack's Retry-After of a 429, in ms, when the error carries one. */
export function retryAfterMs(error: unknown): number | undefined {
  return isRateLimited(error) ? error.retryAfter * 1000 : undefined;
}

/** A post that failed, saying whether it is worth another try. */
export function postFailed(agent: string, error: unknown): AdapterError {
  return new AdapterError(SLACK, `@${agent} could not post: ${describeError(error)}`, {
    cause: error,
    retryable: callRetryable(error),
    retryAfterMs: retryAfterMs(error),
  });
}
