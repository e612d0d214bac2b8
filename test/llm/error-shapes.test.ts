import { afterEach, describe, expect, it } from 'vitest';
import { LlmError } from '../../src/errors.js';
import type { Dialect, FakeReply } from '../fakes/openai-server/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { ask, useFakeServer } from './client-fixture.js';

const contextExceeded =
  "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.";

describe('every error shape reads as one short line', () => {
  const server = useFakeServer();

  async function failure(reply: FakeReply, stream = false): Promise<LlmError> {
    server.fake.script('m', reply);
    const error = await server
      .client({ stream })
      .complete(ask())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmError);
    return error as LlmError;
  }

  const httpErrors: Array<[Dialect, string, number, string]> = [
    ['openai', '{ error: { message, type, param, code } }', 400, "Invalid 'messages': empty array."],
    ['vllm', '{ object: "error", message, type, code }', 400, contextExceeded],
    ['ollama', '{ error: "..." }', 404, 'model "llama9" not found, try pulling it first'],
    ['lmstudio', '{ error: "..." }', 404, 'Unexpected endpoint or method. (POST /v1/chat/completion)'],
    ['llamacpp', '{ error: { code, message, type } }', 400, 'the request exceeds the available context size'],
    ['litellm', '{ error: { code: "400", ... } } (every field a string)', 400, 'Invalid model name passed in'],
    ['gemini', '[{ error: { code, message, status } }]', 400, 'API key not valid. Please pass a valid API key.'],
  ];
  for (const [dialect, shape, status, message] of httpErrors) {
    it(`${dialect}: ${status} with ${shape}`, async () => {
      const error = await failure({ dialect, status, errorMessage: message });
      expect(error.message).toBe(`the model endpoint answered ${status}: ${message}`);
      expect(error.status).toBe(status);
    });
  }

  for (const stream of [false, true]) {
    it(`openrouter: a 200 with { error: { message, code } } in it (stream: ${stream})`, async () => {
      const error = await failure(
        { dialect: 'openrouter', errorIn200: { message: 'Provider returned error', code: 502 } },
        stream,
      );
      expect(error.message).toBe('the model endpoint answered 502: Provider returned error (Upstream)');
      expect(error.retryable).toBe(true);
    });
  }

  it('retries an in-200 error that carries a retryable code', async () => {
    server.fake.script(
      'm',
      { dialect: 'openrouter', errorIn200: { message: 'Rate limit exceeded', code: 429 } },
      { dialect: 'openrouter', content: 'second try' },
    );
    const response = await server.client({ maxRetries: 1 }).complete(ask());
    expect(response.content).toBe('second try');
  });

  it('a 200 with choices: [] is an error, not a crash', async () => {
    const error = await failure({ content: 'x', noChoices: true });
    expect(error.message).toBe('the model endpoint sent an answer without choices');
  });

  const streamErrors: Array<[string, FakeReply, string]> = [
    [
      'openrouter: an error chunk with finish_reason "error"',
      {
        dialect: 'openrouter',
        content: 'partial answer',
        streamError: { message: 'Provider disconnected', code: 'server_error', afterChunks: 3 },
      },
      'the model endpoint reported an error: Provider disconnected',
    ],
    [
      'vllm: { object: "error", ... } as stream data',
      { dialect: 'vllm', content: 'partial', streamError: { message: 'CUDA out of memory', code: 500 } },
      'the model endpoint answered 500: CUDA out of memory',
    ],
    [
      'llama.cpp: { error: { code, message, type } } as stream data',
      { dialect: 'llamacpp', content: 'partial', streamError: { message: 'slot unavailable', code: 503 } },
      'the model endpoint answered 503: slot unavailable',
    ],
    [
      'ollama: { error: "..." } as stream data',
      { dialect: 'ollama', content: 'partial', streamError: { message: 'model runner has unexpectedly stopped' } },
      'the model endpoint reported an error: model runner has unexpectedly stopped',
    ],
    [
      'an SSE event named error',
      { content: 'partial', streamError: { message: 'upstream timed out', code: 504, asEvent: true } },
      'the model endpoint reported an error: upstream timed out',
    ],
  ];
  for (const [shape, reply, message] of streamErrors) {
    it(`mid-stream, ${shape}`, async () => {
      const error = await failure(reply, true);
      expect(error.message).toBe(message);
    });
  }
});

describe('in a room', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.close());

  it("shows vLLM's context-length error instead of 'status code (no body)'", async () => {
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.script('code', { dialect: 'vllm', status: 400, errorMessage: contextExceeded });
    await h.adapter.say('@code summarise everything');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      `[system]: @code could not answer: the model endpoint answered 400: ${contextExceeded}`,
    ]);
  });
});
