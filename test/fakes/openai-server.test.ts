import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { batchPrompt, batchResponseFormat } from '../../src/llm/batch.js';
import {
  type AgentView,
  batchAgentsOf,
  type FakeOpenAI,
  perAgent,
  repeatedPrefixShare,
  startFakeOpenAI,
} from './openai-server/index.js';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('fake OpenAI server, driven by the real openai SDK', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
  });

  afterAll(async () => {
    await fake.close();
  });

  beforeEach(() => {
    fake.respond(() => ({ content: '[pass]' }));
  });

  it('listens on 127.0.0.1 under /v1', () => {
    expect(fake.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });

  it('answers [pass] by default with a chat.completion object', async () => {
    const completion = await client.chat.completions.create({
      model: 'default-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('default-model');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: '[pass]' });
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('answers a plain completion from the responder', async () => {
    fake.respond((request) => ({ content: `echo: ${String(request.messages.at(-1)?.content)}` }));
    const completion = await client.chat.completions.create({
      model: 'plain',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(completion.choices[0]?.message.content).toBe('echo: hello there');
  });

  it('streams content in several deltas that the SDK reassembles', async () => {
    fake.respond(() => ({ content: 'Hello from the streaming fake, friend.' }));
    const stream = await client.chat.completions.create({
      model: 'streamer',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
    });
    let content = '';
    let deltas = 0;
    let finishReason: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const choice = chunk.choices[0];
      if (choice?.delta.content) {
        content += choice.delta.content;
        deltas += 1;
      }
      if (choice?.finish_reason) finishReason = choice.finish_reason;
    }
    expect(content).toBe('Hello from the streaming fake, friend.');
    expect(deltas).toBeGreaterThan(1);
    expect(finishReason).toBe('stop');
    expect(fake.requests.at(-1)?.stream).toBe(true);
  });

  it('returns tool calls without streaming, arguments as a JSON string', async () => {
    fake.respond(() => ({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] }));
    const completion = await client.chat.completions.create({
      model: 'tools',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weatherTool],
    });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    expect(call?.id).toEqual(expect.any(String));
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });

  it('streams tool calls as index-keyed deltas that the SDK accumulates', async () => {
    const args = { command: 'ls -la /workspace && echo "done"', timeoutMs: 5000 };
    fake.respond(() => ({
      content: 'Let me look.',
      toolCalls: [
        { name: 'bash', arguments: args, id: 'call_bash' },
        { name: 'get_weather', arguments: { city: 'Zürich' } },
      ],
    }));
    const stream = client.chat.completions.stream({
      model: 'stream-tools',
      messages: [{ role: 'user', content: 'run it' }],
      tools: [weatherTool],
    });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBe('Let me look.');
    const calls = choice?.message.tool_calls ?? [];
    expect(calls).toHaveLength(2);
    const [first, second] = calls;
    if (first?.type !== 'function' || second?.type !== 'function') throw new Error('expected function tool calls');
    expect(first.id).toBe('call_bash');
    expect(first.function.name).toBe('bash');
    expect(JSON.parse(first.function.arguments)).toEqual(args);
    expect(second.function.name).toBe('get_weather');
    expect(JSON.parse(second.function.arguments)).toEqual({ city: 'Zürich' });
  });

  it('sends tool call arguments in more than one delta when streaming', async () => {
    fake.respond(() => ({ toolCalls: [{ name: 'bash', arguments: { command: 'echo a long enough command' } }] }));
    const stream = await client.chat.completions.create({
      model: 'stream-tools',
      messages: [{ role: 'user', content: 'run it' }],
      stream: true,
    });
    const argumentDeltas: string[] = [];
    let firstDelta: unknown;
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        firstDelta ??= delta;
        if (delta.function?.arguments) argumentDeltas.push(delta.function.arguments);
      }
    }
    expect(firstDelta).toMatchObject({ index: 0, type: 'function', function: { name: 'bash' } });
    expect(argumentDeltas.length).toBeGreaterThan(1);
    expect(JSON.parse(argumentDeltas.join(''))).toEqual({ command: 'echo a long enough command' });
  });

  it('sends string arguments verbatim, so clients can be tested against malformed JSON', async () => {
    fake.respond(() => ({ content: 'trying', toolCalls: [{ name: 'bash', arguments: '{"command": "ls' }] }));
    const completion = await client.chat.completions.create({
      model: 'malformed',
      messages: [{ role: 'user', content: 'x' }],
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.function.arguments).toBe('{"command": "ls');
    expect(completion.choices[0]?.message.content).toBe('trying');
  });

  it('reports usage in a final chunk when stream_options.include_usage is set', async () => {
    const stream = await client.chat.completions.create({
      model: 'usage',
      messages: [{ role: 'user', content: 'count me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const usage = [];
    for await (const chunk of stream) if (chunk.usage) usage.push(chunk.usage);
    expect(usage).toHaveLength(1);
    expect(usage[0]?.total_tokens).toBeGreaterThan(0);
  });

  it('consumes per-model script queues in order before the responder', async () => {
    fake.script('alpha', { content: 'alpha one' }, { content: 'alpha two' });
    fake.script('beta', { content: 'beta one' });
    fake.respond(() => ({ content: 'fallback' }));
    const ask = async (model: string): Promise<string | null | undefined> =>
      (await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'go' }] })).choices[0]?.message
        .content;
    expect(await ask('beta')).toBe('beta one');
    expect(await ask('alpha')).toBe('alpha one');
    expect(await ask('beta')).toBe('fallback');
    expect(await ask('alpha')).toBe('alpha two');
    expect(await ask('alpha')).toBe('fallback');
  });

  it('passes the request and its position in requests to the responder', async () => {
    const seen: number[] = [];
    fake.respond((request, index) => {
      seen.push(index);
      expect(fake.requests[index]).toBe(request);
      return { content: 'ok' };
    });
    await client.chat.completions.create({ model: 'indexed', messages: [{ role: 'user', content: 'one' }] });
    expect(seen).toEqual([fake.requests.length - 1]);
  });

  it('records messages, tools, headers and the raw body of each request', async () => {
    const before = fake.requests.length;
    await client.chat.completions.create({
      model: 'recorder',
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'You are @data.' },
        { role: 'user', content: 'weather in Oslo?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'rain' },
      ],
      tools: [weatherTool],
    });
    expect(fake.requests).toHaveLength(before + 1);
    const request = fake.requests[before];
    expect(request?.model).toBe('recorder');
    expect(request?.stream).toBe(false);
    expect(request?.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(request?.messages[3]).toMatchObject({ tool_call_id: 'call_1', content: 'rain' });
    expect(request?.tools).toEqual([weatherTool]);
    expect(request?.headers.authorization).toBe('Bearer test');
    expect(request?.body.temperature).toBe(0.2);
  });

  it('surfaces a 500 as OpenAI.APIError with its status and message when retries are off', async () => {
    fake.script('broken', { status: 500, errorMessage: 'upstream exploded' });
    const error = await client.chat.completions
      .create({ model: 'broken', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((error as Error).message).toContain('upstream exploded');
  });

  it('answers 500 with the message of a responder that throws', async () => {
    fake.respond(() => {
      throw new Error('responder blew up');
    });
    const error = await client.chat.completions
      .create({ model: 'thrower', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((error as Error).message).toContain('responder blew up');
  });

  it('sends a 429 with Retry-After that the SDK retries until the next scripted reply succeeds', async () => {
    const retrying = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 2 });
    fake.script(
      'limited',
      { status: 429, retryAfter: 0.01 },
      { status: 429, retryAfter: 0.01 },
      { content: 'finally' },
    );
    const before = fake.requests.length;
    const completion = await retrying.chat.completions.create({
      model: 'limited',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(completion.choices[0]?.message.content).toBe('finally');
    expect(fake.requests.length - before).toBe(3);
    expect(fake.requests.at(-1)?.headers['x-stainless-retry-count']).toBe('2');
  });

  it('exposes status, error code and Retry-After of a 429 to the caller', async () => {
    fake.script('limited-once', { status: 429, retryAfter: 7 });
    const error = await client.chat.completions
      .create({ model: 'limited-once', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(429);
    expect(apiError.code).toBe('rate_limit_exceeded');
    expect(apiError.headers?.get('retry-after')).toBe('7');
  });

  it('waits delayMs before answering', async () => {
    fake.script('slow', { content: 'eventually', delayMs: 20 });
    const completion = await client.chat.completions.create({
      model: 'slow',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(completion.choices[0]?.message.content).toBe('eventually');
  });

  it('hangs until the SDK timeout aborts the request', async () => {
    fake.script('stuck', { hang: true });
    const error = await client.chat.completions
      .create({ model: 'stuck', messages: [{ role: 'user', content: 'x' }] }, { timeout: 200 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    expect(fake.requests.at(-1)?.model).toBe('stuck');
  });

  it('hangs a streamed request until the caller aborts it', async () => {
    fake.script('stuck-stream', { hang: true });
    const before = fake.requests.length;
    const controller = new AbortController();
    const pending = client.chat.completions
      .create(
        { model: 'stuck-stream', messages: [{ role: 'user', content: 'x' }], stream: true },
        { signal: controller.signal },
      )
      .catch((caught: unknown) => caught);
    await expect.poll(() => fake.requests.length).toBe(before + 1);
    controller.abort();
    expect(await pending).toBeInstanceOf(OpenAI.APIUserAbortError);
  });

  it('keeps serving after a client gave up on a delayed reply', async () => {
    fake.script('abandoned', { content: 'too late', delayMs: 5_000 });
    const error = await client.chat.completions
      .create({ model: 'abandoned', messages: [{ role: 'user', content: 'x' }] }, { timeout: 100 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    const completion = await client.chat.completions.create({
      model: 'after',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(completion.choices[0]?.message.content).toBe('[pass]');
  });

  it('lists the models it has seen', async () => {
    await client.chat.completions.create({ model: 'listed-model', messages: [{ role: 'user', content: 'x' }] });
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toContain('listed-model');
    expect(ids).toContain('alpha');
  });

  it('answers unknown paths with 404 and an error body', async () => {
    const response = await fetch(`${fake.baseURL}/embeddings-nope`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unknown_url' });
    expect(body.error.message).toContain('/v1/embeddings-nope');
  });

  it('rejects a body that is not JSON with 400', async () => {
    const before = fake.requests.length;
    const response = await fetch(`${fake.baseURL}/chat/completions`, { method: 'POST', body: 'not json' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    expect(fake.requests).toHaveLength(before);
  });
});

describe('fake OpenAI server lifecycle', () => {
  it('takes a responder at start and closes with hung requests still open', async () => {
    const fake = await startFakeOpenAI({ responder: (request) => ({ content: `hi ${request.model}` }) });
    const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.choices[0]?.message.content).toBe('hi m');

    fake.script('m', { hang: true });
    const hung = client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught);
    await expect.poll(() => fake.requests.length).toBe(2);
    await fake.close();
    expect(await hung).toBeInstanceOf(OpenAI.APIConnectionError);
    await fake.close();
  });
});

describe('fake OpenAI server with the models it has, like OpenAI and Ollama', () => {
  it('lists exactly those models as OpenAI does, and answers 404 model_not_found for any other', async () => {
    const fake = await startFakeOpenAI({ models: ['llama3.2:latest', 'qwen2.5:7b'], modelOwner: 'library' });
    try {
      const body = await (await fetch(`${fake.baseURL}/models`)).json();
      expect(body).toEqual({
        object: 'list',
        data: [
          { id: 'llama3.2:latest', object: 'model', created: 0, owned_by: 'library' },
          { id: 'qwen2.5:7b', object: 'model', created: 0, owned_by: 'library' },
        ],
      });
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
      const ask = (model: string) =>
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });
      // As on Ollama, a name without a tag is the `latest` one.
      expect((await ask('llama3.2')).choices[0]?.message.content).toBe('[pass]');
      const refused = await ask('gpt-4o-mini').catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
      expect(refused).toMatchObject({ status: 404, code: 'model_not_found' });
      expect((await fetch(`${fake.baseURL}/models/gpt-4o-mini`)).status).toBe(404);
      // The OpenAI API lives under /v1 only, as on Ollama.
      expect((await fetch(fake.baseURL.replace(/\/v1$/, '/models'))).status).toBe(404);
    } finally {
      await fake.close();
    }
  });
});

describe('fake OpenAI server speaking Mistral', () => {
  it("sends a reasoning model's content as thinking and text parts, in one answer and in stream deltas", async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.script(
        'magistral',
        { dialect: 'mistral', reasoning: 'Two and two.', content: 'Four.' },
        { dialect: 'mistral', reasoning: 'Two and two.', content: 'Four.' },
        { dialect: 'mistral', content: 'Plain.' },
      );
      const client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
      const messages = [{ role: 'user' as const, content: 'x' }];
      const whole = await client.chat.completions.create({ model: 'magistral', messages });
      expect(whole.choices[0]?.message.content).toEqual([
        { type: 'thinking', thinking: [{ type: 'text', text: 'Two and two.' }] },
        { type: 'text', text: 'Four.' },
      ]);
      const deltas: unknown[] = [];
      for await (const chunk of await client.chat.completions.create({ model: 'magistral', messages, stream: true })) {
        const content = chunk.choices[0]?.delta.content;
        if (content) deltas.push(content);
      }
      expect(deltas[0]).toEqual([{ type: 'thinking', thinking: [{ type: 'text', text: 'Two' }] }]);
      expect(deltas.at(-1)).toEqual([{ type: 'text', text: '.' }]); // 'Four.' in pieces of four characters
      expect(deltas.every(Array.isArray)).toBe(true);
      // Without reasoning, content is the plain string every server sends.
      const plain = await client.chat.completions.create({ model: 'magistral', messages });
      expect(plain.choices[0]?.message.content).toBe('Plain.');
    } finally {
      await fake.close();
    }
  });
});

describe('fake OpenAI server: usage like OpenAI (prompt caching)', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ usage: 'openai' });
    client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
  });

  afterAll(async () => {
    await fake.close();
  });

  const ask = async (messages: Array<{ role: 'system' | 'user'; content: string }>) =>
    (await client.chat.completions.create({ model: 'gpt-4o', messages })).usage;

  it('caches the longest prefix shared with an earlier request, from 1024 tokens on, in steps of 128', async () => {
    const system = { role: 'system' as const, content: Array.from({ length: 1500 }, (_, i) => `w${i}`).join(' ') };
    const first = await ask([system, { role: 'user', content: 'first question' }]);
    expect(first?.prompt_tokens).toBeGreaterThan(1500);
    expect(first?.prompt_tokens_details?.cached_tokens).toBe(0);
    const second = await ask([system, { role: 'user', content: 'second question' }]);
    const cached = second?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect((cached - 1024) % 128).toBe(0);
    expect(cached).toBeLessThanOrEqual(second?.prompt_tokens ?? 0);
    expect((second?.prompt_tokens ?? 0) - cached).toBeLessThan(128 + 10);
  });

  it('caches nothing below 1024 tokens or when the start differs', async () => {
    await ask([{ role: 'user', content: 'short and sweet' }]);
    expect((await ask([{ role: 'user', content: 'short and sweet' }]))?.prompt_tokens_details?.cached_tokens).toBe(0);
    const long = Array.from({ length: 1500 }, (_, i) => `v${i}`).join(' ');
    await ask([{ role: 'system', content: `A ${long}` }]);
    expect((await ask([{ role: 'system', content: `B ${long}` }]))?.prompt_tokens_details?.cached_tokens).toBe(0);
  });

  it("counts a structured output's schema as a prefix of the prompt (OpenAI), or leaves it out (a grammar)", async () => {
    const long = Array.from({ length: 1500 }, (_, i) => `s${i}`).join(' ');
    const schema = (key: string) => ({
      type: 'json_schema' as const,
      json_schema: {
        name: 'answer',
        strict: true,
        schema: {
          type: 'object',
          properties: { [key]: { type: 'string' } },
          required: [key],
          additionalProperties: false,
        },
      },
    });
    const cachedWith = async (target: FakeOpenAI, key: string) => {
      const sdk = new OpenAI({ baseURL: target.baseURL, apiKey: 'test', maxRetries: 0 });
      const completion = await sdk.chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'system', content: long }],
        response_format: schema(key),
      });
      return completion.usage?.prompt_tokens_details?.cached_tokens;
    };
    await cachedWith(fake, 'ana');
    expect(await cachedWith(fake, 'ben')).toBe(0); // another schema: another prefix
    expect(await cachedWith(fake, 'ana')).toBeGreaterThanOrEqual(1024);
    const grammar = await startFakeOpenAI({ usage: 'openai', schema: 'grammar' });
    await cachedWith(grammar, 'ana');
    expect(await cachedWith(grammar, 'ben')).toBeGreaterThanOrEqual(1024);
    await grammar.close();
  });

  it('measures the share of input that repeats an earlier prefix', () => {
    const a = { messages: [{ role: 'user', content: 'abcdefgh' }], tools: undefined };
    const b = { messages: [{ role: 'user', content: 'abcdXXXX' }], tools: undefined };
    // "<|user|>" is 8 characters: b shares 8 + 4 of its 16 characters with a.
    expect(repeatedPrefixShare([a, b])).toBeCloseTo(12 / 32);
  });
});

describe('fake OpenAI server: embeddings', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
  });

  afterAll(async () => {
    await fake.close();
  });

  it('answers deterministic vectors, as floats or base64 (the SDK default), similar for texts sharing words', async () => {
    const floats = await client.embeddings.create({
      model: 'emb',
      input: ['the ocean launch code', 'ocean launch code please', 'printer jammed'],
      encoding_format: 'float',
    });
    const [a, b, c] = floats.data.map((d) => d.embedding);
    const dot = (x: number[] = [], y: number[] = []) => x.reduce((sum, v, i) => sum + v * (y[i] ?? 0), 0);
    expect(a).toHaveLength(64);
    expect(dot(a, b)).toBeGreaterThan(dot(a, c));
    const base64 = await client.embeddings.create({ model: 'emb', input: 'the ocean launch code' });
    expect(base64.data[0]?.embedding.map((v) => v.toFixed(5))).toEqual(a?.map((v) => v.toFixed(5)));
    expect(fake.embeddingRequests.map((r) => r.input.length)).toEqual([3, 1]);
  });

  it('fails on request, with an OpenAI-style error', async () => {
    fake.failEmbeddings(503);
    await expect(client.embeddings.create({ model: 'emb', input: 'x' })).rejects.toMatchObject({ status: 503 });
    fake.failEmbeddings(undefined);
  });
});

describe('fake OpenAI server: batched turns (structured output for several agents)', () => {
  let fake: FakeOpenAI;
  let client: OpenAI;
  const agents = [
    {
      name: 'ana',
      card: 'You are @ana in a shared chat room with humans and other agents (@ben).',
      contextTokens: 9000,
    },
    {
      name: 'ben',
      card: 'You are @ben in a shared chat room with humans and other agents (@ana).',
      tools: ['bash'],
      contextTokens: 9000,
    },
  ].map((agent) => ({ ...agent, situation: `${agent.name}: a new message arrived.` }));
  const batch = {
    model: 'shared',
    messages: batchPrompt({ seats: agents, transcript: '[@user]: hello\n[@ana]: hi all', agents }),
    response_format: batchResponseFormat(['ana', 'ben']),
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    client = new OpenAI({ baseURL: fake.baseURL, apiKey: 'test', maxRetries: 0 });
  });
  afterAll(async () => fake.close());

  it('answers with the list of replies the schema asks for', async () => {
    fake.respond((request) => ({
      agents: Object.fromEntries((batchAgentsOf(request) ?? []).map((n) => [n, `${n} ok`])),
    }));
    const completion = await client.chat.completions.create(batch);
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({
      replies: [
        { agent: 'ana', reply: 'ana ok' },
        { agent: 'ben', reply: 'ben ok' },
      ],
    });
    expect(batchAgentsOf(fake.requests.at(-1) ?? { messages: [] })).toEqual(['ana', 'ben']);
  });

  it('lets a script answer each agent from what it sees, alone or batched; a tool call in a batch is [tools]', async () => {
    const seen: AgentView[] = [];
    fake.respond(
      perAgent((view) => {
        seen.push(view);
        return view.agent === 'ben' ? { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] } : 'fine';
      }),
    );
    const completion = await client.chat.completions.create(batch);
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual({
      replies: [
        { agent: 'ana', reply: 'fine' },
        { agent: 'ben', reply: '[tools]' },
      ],
    });
    expect(seen.map((v) => [v.agent, v.batched, v.newest, v.situation])).toEqual([
      ['ana', true, '[@ana]: hi all', 'ana: a new message arrived.'],
      ['ben', true, '[@ana]: hi all', 'ben: a new message arrived.'],
    ]);
    // Alone, the same script answers the agent its request is for.
    seen.length = 0;
    const alone = await client.chat.completions.create({
      model: 'shared',
      messages: [
        { role: 'system', content: 'rules\n\nYou are @ana in a shared chat room with humans and other agents (@ben).' },
        { role: 'user', content: '[@user]: hello' },
        { role: 'user', content: '>>> SITUATION <<<\nana: asked alone.' },
      ],
    });
    expect(alone.choices[0]?.message.content).toBe('fine');
    expect(seen.map((v) => [v.agent, v.batched, v.newest, v.situation])).toEqual([
      ['ana', false, '[@user]: hello', 'ana: asked alone.'],
    ]);
  });
});
