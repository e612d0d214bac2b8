import { setTimeout as sleep } from 'node:timers/promises';

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
