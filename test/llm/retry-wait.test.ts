import { afterEach, describe, expect, it } from 'vitest';
import { LlmError } from '../../src/errors.js';
import { createOpenAiClient } from '../../src/llm/client.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { ask, useFakeServer } from './client-fixture.js';

describe('waiting to retry', () => {
  const server = useFakeServer();

  it('honours a Retry-After that fits in the time limit', async () => {
    server.fake.script('m', { status: 429, retryAfter: 1 }, { content: 'after the wait' });
    const started = Date.now();
    const response = await server.client({ maxRetries: 1, timeoutMs: 20_000 }).complete(ask());
    expect(response.content).toBe('after the wait');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('does not start a backoff that would outlast the time limit: the last error is the answer', async () => {
    // Backoff after the 1st, 2nd, 3rd failure: about 0.5, 1 and 2 s; a 4th wait (3 to 4 s) would end past 5 s.
    server.fake.respond(() => ({ status: 503, errorMessage: 'overloaded' }));
    const error = await server
      .client({ maxRetries: 10, timeoutMs: 5_000 })
      .complete(ask())
      .catch((caught: unknown) => caught);
    expect((error as LlmError).message).toBe('the model endpoint answered 503: overloaded');
  });

  it('fails at once when the server asks to wait longer than the time limit', async () => {
    server.fake.script('m', { status: 429, retryAfter: 3600 });
    const error = await server
      .client({ maxRetries: 3, timeoutMs: 8_000 })
      .complete(ask())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).message).toBe(
      'the model endpoint asked to wait 3600 s, longer than LLM_TIMEOUT_S (8 s)',
    );
    expect((error as LlmError).status).toBe(429);
    expect(server.fake.requests).toHaveLength(1);
  });

  it('fails at once when a later wait would outlast what is left of the time limit', async () => {
    server.fake.script('m', { status: 429, retryAfter: 2 }, { status: 429, retryAfter: 5 });
    const error = await server
      .client({ maxRetries: 3, timeoutMs: 6_000 })
      .complete(ask())
      .catch((caught: unknown) => caught);
    expect((error as LlmError).message).toBe(
      'the model endpoint asked to wait 5 s, longer than what is left of LLM_TIMEOUT_S (6 s)',
    );
    expect(server.fake.requests).toHaveLength(2);
  });
});

describe('in a room', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.close());

  const code = [{ name: 'code' }];

  it('a 429 with Retry-After: 3600 and LLM_TIMEOUT_S=8 ends the turn with one short line', async () => {
    h = await startHarness({ agents: code, env: { LLM_TIMEOUT_S: '8', LLM_MAX_RETRIES: '3' } });
    h.llm.script('code', { status: 429, retryAfter: 3600 });
    await h.adapter.say('@code hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[system]: @code could not answer: the model endpoint asked to wait 3600 s, longer than LLM_TIMEOUT_S (8 s)',
    ]);
  });

  // The client says when it starts waiting, so the stop lands in the wait and not in the request before it.
  async function startWaiting(status: number): Promise<Harness> {
    let waiting: () => void = () => {};
    const inWait = new Promise<void>((resolve) => {
      waiting = resolve;
    });
    const harness = await startHarness({
      agents: code,
      env: { LLM_TIMEOUT_S: '900', LLM_MAX_RETRIES: '3' },
      llm: (config) => (agent) =>
        createOpenAiClient({
          baseURL: agent.endpoint,
          apiKey: agent.apiKey,
          timeoutMs: config.settings.LLM_TIMEOUT_S * 1000,
          maxRetries: config.settings.LLM_MAX_RETRIES,
          stream: config.settings.LLM_STREAM,
          onRetry: () => waiting(),
        }),
    });
    harness.llm.script('code', { status, retryAfter: 600 });
    await harness.adapter.say('@code hello');
    await inWait;
    return harness;
  }

  it('/pass ends a wait for a retry at once', async () => {
    h = await startWaiting(429);
    expect(await h.adapter.command('pass')).toBe('Control is with the humans (1 agent turn stopped).');
    await h.bridge.idle();
    expect(h.adapter.posts).toEqual([]);
    expect(h.llm.requests).toHaveLength(1);
  });

  it('shutting down ends a wait for a retry at once', async () => {
    h = await startWaiting(503);
    await h.bridge.stop();
    expect(h.adapter.posts).toEqual([]);
    expect(h.llm.requests).toHaveLength(1);
  });
});
