import { describe, expect, it } from 'vitest';
import type { LlmError } from '../../src/errors.js';
import { AnswerAssembler } from '../../src/llm/answer-assembler.js';
import { createOpenAiClient } from '../../src/llm/client.js';
import { readWireError, withReadableErrors } from '../../src/llm/error-shapes.js';
import { readRetryAfter } from '../../src/llm/failures.js';
import { readAnswer } from '../../src/llm/read-answer.js';
import { extractToolCallMarkup } from '../../src/llm/reply-markup.js';
import { startFakeOpenAI } from '../fakes/openai-server/index.js';
import { ask, useFakeServer, writeFilesTool } from './client-fixture.js';

describe('Retry-After', () => {
  it("reads OpenAI's retry-after-ms first, then seconds, then an HTTP date", () => {
    expect(readRetryAfter(new Headers({ 'retry-after-ms': '1500', 'retry-after': '2' }))).toBe(1500);
    expect(readRetryAfter(new Headers({ 'retry-after': '2.5' }))).toBe(2500);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(readRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now)).toBe(30_000);
    expect(readRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(readRetryAfter(new Headers())).toBeUndefined();
  });
});

describe('error bodies', () => {
  it('reads a FastAPI { detail } body (LiteLLM, vLLM routes) and leaves a normal answer alone', () => {
    expect(readWireError({ detail: 'Not Found' })).toEqual({ message: 'Not Found' });
    expect(readWireError({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: {} }] })).toBeUndefined();
    expect(readWireError([{ id: 'x' }])).toBeUndefined();
  });

  it('passes an error body that is not JSON (a proxy page) through unchanged', async () => {
    const page = '<html><body>502 Bad Gateway</body></html>';
    const fetchPage = withReadableErrors(async () => new Response(page, { status: 502 }));
    const response = await fetchPage('http://127.0.0.1/');
    expect(response.status).toBe(502);
    expect(await response.text()).toBe(page);
  });
});

describe('reading answers', () => {
  const sse = (text: string) => new Response(text, { headers: { 'content-type': 'text/event-stream' } });

  it('skips empty data lines and fails on stream data that is not JSON', async () => {
    const answer = new AnswerAssembler();
    const reading = readAnswer(
      sse('data: \n\ndata: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: <html>oops\n\n'),
      answer,
    );
    await expect(reading).rejects.toThrow('the model endpoint sent unreadable stream data: <html>oops');
    expect(answer.hasStarted()).toBe(true);
  });

  it('fails on a JSON answer that is not JSON', async () => {
    const response = new Response('Internal Server Error', { headers: { 'content-type': 'application/json' } });
    await expect(readAnswer(response, new AnswerAssembler())).rejects.toThrow(
      'the model endpoint sent something that is not an answer: Internal Server Error',
    );
  });
});

describe('tool-call markup', () => {
  it('takes "parameters" where a template writes them instead of "arguments"', () => {
    const text = '<tool_call>{"name": "bash", "parameters": {"command": "pwd"}}</tool_call>';
    expect(extractToolCallMarkup(text)).toEqual({
      text: '',
      calls: [{ name: 'bash', arguments: '{"command":"pwd"}' }],
    });
  });

  it('leaves a block that is not a call as text', () => {
    const text = 'Use <tool_call>like this</tool_call> to call.';
    expect(extractToolCallMarkup(text)).toEqual({ text, calls: [] });
  });
});

describe('odd tool-call deltas', () => {
  const server = useFakeServer();

  it('does not double a name repeated in every delta, and takes arguments sent as an object', async () => {
    server.fake.script('m', {
      finishReason: 'tool_calls',
      deltas: [
        { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write_files' } }] },
        { tool_calls: [{ index: 0, function: { name: 'write_files', arguments: { files: [] } } }] },
      ],
    });
    const response = await server.client({ stream: true }).complete(ask({ tools: [writeFilesTool] }));
    expect(response.toolCalls).toEqual([{ id: 'call_1', name: 'write_files', arguments: '{"files":[]}' }]);
  });

  it('retries an answer with empty choices', async () => {
    server.fake.script('m', { content: 'x', noChoices: true }, { content: 'second' });
    expect((await server.client({ maxRetries: 1 }).complete(ask())).content).toBe('second');
  });

  it('returns only the note for an answer cut off before any text', async () => {
    server.fake.script('m', { content: '', finishReason: 'length' });
    expect((await server.client().complete(ask())).content).toBe('[cut off: the model reached its output limit]');
  });
});

describe('an endpoint that cannot be reached', () => {
  it('is tried again before the call fails', async () => {
    const gone = await startFakeOpenAI();
    await gone.close();
    const waits: LlmError[] = [];
    const client = createOpenAiClient({
      baseURL: gone.baseURL,
      apiKey: undefined,
      timeoutMs: 20_000,
      maxRetries: 1,
      stream: false,
      onRetry: ({ error }) => waits.push(error),
    });
    await expect(client.complete(ask())).rejects.toThrow(/^cannot reach the model endpoint/);
    expect(waits.map((error) => error.message)).toEqual([expect.stringMatching(/^cannot reach the model endpoint/)]);
  });
});
