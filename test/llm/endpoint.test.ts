import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAiClient } from '../../src/llm/client.js';
import { parseEndpoint } from '../../src/llm/endpoint.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';

let llm: FakeOpenAI;
beforeEach(async () => {
  llm = await startFakeOpenAI({ responder: () => ({ content: 'hi' }) });
});
afterEach(async () => llm.close());

function withCredentials(base: string, userinfo: string, query: string): string {
  return base.replace('http://', `http://${userinfo}@`) + query;
}

const ask = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }] };

describe('endpoints with credentials in the URL', () => {
  it('sends user:password as Basic authentication and the query with every request', async () => {
    for (const stream of [false, true]) {
      const client = createOpenAiClient({
        baseURL: withCredentials(llm.baseURL, 'alice:p%40ss', '?api-key=k1&api-version=2024'),
        apiKey: 'sk-unused-because-the-url-logs-in',
        timeoutMs: 10_000,
        maxRetries: 0,
        stream,
      });
      expect((await client.complete(ask)).content).toBe('hi');
    }
    expect(llm.requests.map((r) => r.url)).toEqual([
      '/v1/chat/completions?api-key=k1&api-version=2024',
      '/v1/chat/completions?api-key=k1&api-version=2024',
    ]);
    const basic = `Basic ${Buffer.from('alice:p@ss').toString('base64')}`;
    expect(llm.requests.map((r) => r.headers.authorization)).toEqual([basic, basic]);
  });

  it('keeps the Bearer key when the URL has no credentials', async () => {
    const client = createOpenAiClient({
      baseURL: llm.baseURL,
      apiKey: 'k-2',
      timeoutMs: 10_000,
      maxRetries: 0,
      stream: false,
    });
    await client.complete(ask);
    expect(llm.requests[0]?.headers.authorization).toBe('Bearer k-2');
    expect(llm.requests[0]?.url).toBe('/v1/chat/completions');
  });

  it('names an unreachable endpoint without its credentials', async () => {
    await llm.close();
    const client = createOpenAiClient({
      baseURL: withCredentials(llm.baseURL, 'bob:pw-secret-9', '?key=qk-secret-9'),
      apiKey: undefined,
      timeoutMs: 10_000,
      maxRetries: 0,
      stream: false,
    });
    const error = await client.complete(ask).catch((e: Error) => e);
    expect((error as Error).message).toBe(
      `cannot reach the model endpoint ${withCredentials(llm.baseURL, '[redacted]', '?key=[redacted]')}`,
    );
  });

  it('leaves a URL it cannot parse as it is', () => {
    expect(parseEndpoint('not a url')).toEqual({ baseURL: 'not a url', query: {}, authorization: undefined });
  });
});
