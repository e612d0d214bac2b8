import { describe, expect, it } from 'vitest';
import { LlmError } from '../../src/errors.js';
import { ask, useFakeServer } from './client-fixture.js';

describe('when the client streams', () => {
  const server = useFakeServer();

  it('asks for a whole answer when LLM_STREAM is off and no preview is shown', async () => {
    server.fake.script('m', { content: 'plain answer' });
    const response = await server.client().complete(ask());
    expect(response.content).toBe('plain answer');
    expect(server.fake.requests[0]?.stream).toBe(false);
    expect(server.fake.requests[0]?.body).not.toHaveProperty('stream_options');
  });

  it('streams with LLM_STREAM on, asks for usage and reads it from the last chunk', async () => {
    server.fake.script('m', { content: 'streamed answer' });
    const response = await server.client({ stream: true }).complete(ask());
    expect(response.content).toBe('streamed answer');
    expect(server.fake.requests[0]?.stream).toBe(true);
    expect(server.fake.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    expect(response.usage).toEqual({ input: expect.any(Number), cached: 0, output: 4 });
    expect(response.usage?.input).toBeGreaterThan(0);
  });

  it('streams when the caller shows a preview, passing the text so far', async () => {
    server.fake.script('m', { content: 'Hello from the preview path.' });
    const seen: string[] = [];
    const response = await server.client().complete(ask({ onText: (text) => seen.push(text) }));
    expect(server.fake.requests[0]?.stream).toBe(true);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe('Hello from the preview path.');
    expect(response.content).toBe('Hello from the preview path.');
  });

  it('reads usage that Groq sends in x_groq on its last chunk', async () => {
    server.fake.script('m', { content: 'fast answer', dialect: 'groq' });
    const response = await server.client({ stream: true }).complete(ask());
    expect(response.usage).toEqual({ input: expect.any(Number), cached: 0, output: 3 });
  });

  it('takes a plain JSON answer to a streamed request (a server that ignores stream: true)', async () => {
    server.fake.script('m', { content: 'not streamed after all', ignoreStream: true });
    const seen: string[] = [];
    const response = await server.client({ stream: true }).complete(ask({ onText: (text) => seen.push(text) }));
    expect(server.fake.requests[0]?.stream).toBe(true);
    expect(response.content).toBe('not streamed after all');
    expect(response.usage?.output).toBeGreaterThan(0);
    expect(seen).toEqual(['not streamed after all']);
  });

  it('fails a stream that yields nothing instead of returning an empty reply', async () => {
    server.fake.script('m', { emptyStream: true });
    const error = await server
      .client({ stream: true })
      .complete(ask())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).message).toBe('the model endpoint sent an empty answer');
  });
});

describe('a server that refuses stream_options', () => {
  const server = useFakeServer({ unsupportedParams: ['stream_options'] });

  it('is asked again without them, and not asked for them again', async () => {
    server.fake.script('m', { content: 'first' }, { content: 'second' });
    const client = server.client({ stream: true, maxRetries: 0 });
    expect((await client.complete(ask())).content).toBe('first');
    expect((await client.complete(ask())).content).toBe('second');
    expect(server.fake.requests.map((r) => 'stream_options' in r.body)).toEqual([true, false, false]);
  });
});
