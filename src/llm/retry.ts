import { setTimeout as sleep } from 'node:timers/promises';
import { LlmError } from '../errors.js';
import { type Endpoint, timeoutError } from './failures.js';

export interface RetryPolicy extends Endpoint {
  /** Further attempts after the first, for retryable failures only. */
  readonly maxRetries: number;
  /** Told before each wait for another attempt (for logs). */
  readonly onRetry?: ((retry: { readonly waitMs: number; readonly error: LlmError }) => void) | undefined;
}

// The SDK's own schedule: 0.5 s doubling to at most 8 s, with up to a quarter taken off at random.
function backoffMs(retry: number): number {
  return Math.min(500 * 2 ** retry, 8000) * (1 - Math.random() * 0.25);
}

/**
 * Runs one call with retries inside one time limit (LLM_TIMEOUT_S): the limit covers every attempt and every wait
 * between them, a wait the server asks for that would outlast it fails the call at once, and the caller's signal
 * (/pass, shutdown) ends an attempt or a wait at once.
 */
export async function withRetries<T>(
  run: (signal: AbortSignal) => Promise<T>,
  policy: RetryPolicy,
  callerSignal?: AbortSignal,
): Promise<T> {
  const endsAt = Date.now() + policy.timeoutMs;
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  const signal = callerSignal ? AbortSignal.any([callerSignal, deadline]) : deadline;
  const settle = (error: unknown): unknown => {
    if (callerSignal?.aborted) return new LlmError('stopped', { cause: error });
    if (deadline.aborted) return timeoutError(policy, error);
    return error;
  };
  for (let retry = 0; ; retry++) {
    let failure: unknown;
    try {
      return await run(signal);
    } catch (error) {
      failure = settle(error);
    }
    if (!(failure instanceof LlmError) || !failure.retryable || retry >= policy.maxRetries || signal.aborted) {
      throw failure;
    }
    const waitMs = failure.retryAfterMs ?? backoffMs(retry);
    if (waitMs > endsAt - Date.now()) {
      if (failure.retryAfterMs === undefined) throw failure;
      const limit = `LLM_TIMEOUT_S (${Math.round(policy.timeoutMs / 1000)} s)`;
      const beyond = waitMs > policy.timeoutMs ? limit : `what is left of ${limit}`;
      throw new LlmError(`the model endpoint asked to wait ${Math.ceil(waitMs / 1000)} s, longer than ${beyond}`, {
        ...(failure.status !== undefined ? { status: failure.status } : {}),
        retryAfterMs: waitMs,
        cause: failure,
      });
    }
    policy.onRetry?.({ waitMs, error: failure });
    try {
      await sleep(waitMs, undefined, { signal });
    } catch (error) {
      throw settle(error);
    }
  }
}
