import { afterEach, beforeEach } from 'vitest';
import { createOpenAiClient, type LlmClient, type LlmRequest, type OpenAiClientOptions } from '../../src/llm/client.js';
import { type FakeOpenAI, type FakeOpenAIOptions, startFakeOpenAI } from '../fakes/openai-server/index.js';

/** A fake server per test and the real client (through the openai SDK) pointed at it. */
export function useFakeServer(serverOptions: FakeOpenAIOptions = {}): {
  readonly fake: FakeOpenAI;
  client(options?: Partial<OpenAiClientOptions>): LlmClient;
} {
  let fake: FakeOpenAI | undefined;
  beforeEach(async () => {
    fake = await startFakeOpenAI(serverOptions);
  });
  afterEach(async () => {
    await fake?.close();
  });
  return {
    get fake() {
      if (!fake) throw new Error('the fake server starts in beforeEach');
      return fake;
    },
    client(options = {}) {
      if (!fake) throw new Error('the fake server starts in beforeEach');
      return createOpenAiClient({
        baseURL: fake.baseURL,
        apiKey: 'test-key',
        timeoutMs: 10_000,
        maxRetries: 0,
        stream: false,
        ...options,
      });
    },
  };
}

/** One user message to model `m`, with the rest of the request given. */
export function ask(overrides: Partial<LlmRequest> = {}): LlmRequest {
  return { model: 'm', messages: [{ role: 'user', content: 'hello' }], ...overrides };
}

export const bashTool = {
  type: 'function' as const,
  function: {
    name: 'bash',
    description: 'Run a command',
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
};

export const writeFilesTool = {
  type: 'function' as const,
  function: {
    name: 'write_files',
    description: 'Write files',
    parameters: { type: 'object', properties: { files: { type: 'array' } }, required: ['files'] },
  },
};
