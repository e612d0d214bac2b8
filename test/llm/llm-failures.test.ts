import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiClient } from '../../src/llm/client.js';
import { startupWarnings } from '../../src/main.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { startFakeOpenAI } from '../fakes/openai-server/index.js';
import { testConfig } from '../helpers/config.js';
import { agentOf, captureLogger, type Harness, startHarness, toolResultsOf } from '../helpers/harness.js';

let h: Harness;
afterEach(async () => h?.close());

const code = [{ name: 'code', activation: 'mention' as const, tools: ['bash' as const] }];

describe('LLM failures never take the bridge down', () => {
  it('a final failure posts a short system message, leaves the counter as it was, and the room keeps working', async () => {
    h = await startHarness({ agents: code });
    h.llm.script('code', { status: 500, errorMessage: 'model overloaded' }, { content: 'back again' });
    await h.adapter.say('@code hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[system]: @code could not answer: the model endpoint answered 500: model overloaded',
    ]);
    const room = await h.store.rooms.open('test', 'room');
    // An error line is not a hand-back and does not reset the consecutive-agent counter.
    expect(room.state?.control).toMatchObject({ holder: 'agents', count: 0 });
    await h.adapter.say('@code again');
    await h.bridge.idle();
    expect(h.adapter.transcript()[1]).toBe('[@code]: back again');
  });

  it('retries 429 and 5xx with backoff, honouring Retry-After, and logs each retry', async () => {
    const { logger, lines } = captureLogger();
    h = await startHarness({ agents: code, env: { LLM_MAX_RETRIES: '2' }, logger });
    h.llm.script('code', { status: 429, retryAfter: 0.01 }, { status: 503, retryAfter: 0.01 }, { content: 'made it' });
    await h.adapter.say('@code hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@code]: made it']);
    expect(h.llm.requests).toHaveLength(3);
    expect(lines.filter((l) => l.msg === 'model call retried').map((l) => [l.agent, l.status])).toEqual([
      ['code', 429],
      ['code', 503],
    ]);
  });

  it('gives up on a call that exceeds the time limit', async () => {
    h = await startHarness({ agents: code, env: { LLM_TIMEOUT_S: '1' } });
    h.llm.script('code', { hang: true });
    await h.adapter.say('@code hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[system]: @code could not answer: the model did not answer within 1 s']);
  });

  for (const stream of ['false', 'true']) {
    it(`gives up on an answer that stalls after its headers (LLM_STREAM=${stream})`, async () => {
      h = await startHarness({ agents: code, env: { LLM_TIMEOUT_S: '1', LLM_STREAM: stream } });
      h.llm.script('code', { stallAfterHeaders: true });
      await h.adapter.say('@code hello');
      await h.bridge.idle();
      expect(h.adapter.transcript()).toEqual(['[system]: @code could not answer: the model did not answer within 1 s']);
    });
  }

  it('says so when the endpoint cannot be reached', async () => {
    h = await startHarness({ agents: code });
    await h.llm.close();
    await h.adapter.say('@code hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()[0]).toMatch(/^\[system\]: @code could not answer: cannot reach the model endpoint/);
  });
});

describe('the tool loop', () => {
  it('runs each tool call, feeds results back, and posts the final reply (streamed over SSE)', async () => {
    const sandbox = new FakeSandbox((_key, command) =>
      command === 'false' ? { output: '', exitCode: 1 } : { output: `ran ${command}`, exitCode: 0 },
    );
    h = await startHarness({ agents: code, sandbox, env: { LLM_STREAM: 'true' } });
    h.llm.script(
      'code',
      {
        content: 'Let me look.',
        toolCalls: [
          { name: 'bash', arguments: { command: 'ls' } },
          { name: 'bash', arguments: { command: 'false' } },
        ],
      },
      {
        toolCalls: [
          { name: 'teleport', arguments: {} },
          { name: 'bash', arguments: '{not json' },
        ],
      },
      { content: 'All done.' },
    );
    await h.adapter.say('@code check');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@code]: All done.']);
    expect(h.llm.requests.every((r) => r.stream)).toBe(true);
    const second = h.llm.requests[1]?.messages ?? [];
    expect(second.slice(-3)).toMatchObject([
      { role: 'assistant', tool_calls: [{ function: { name: 'bash' } }, { function: { name: 'bash' } }] },
      { role: 'tool' },
      { role: 'tool' },
    ]);
    expect(toolResultsOf(h.llm.requests[1])).toEqual(['ran ls', '[exit code: 1]']);
    const third = h.llm.requests[2]?.messages ?? [];
    expect(third.slice(-2)).toMatchObject([{ role: 'tool' }, { role: 'tool' }]);
    expect(toolResultsOf(h.llm.requests[2]).slice(-2)).toEqual([
      '[ERROR: there is no tool named "teleport"]',
      '[ERROR: arguments are not valid JSON]',
    ]);
    const room = await h.store.rooms.open('test', 'room');
    const stored = (await h.store.rooms.history(room.id, 10)).at(-1);
    expect(stored?.toolRuns.map((r) => r.input)).toEqual(['ls', 'false', '{}', '{not json']);
  });

  it('stops after MAX_TOOL_ROUNDS and says so in the chat', async () => {
    h = await startHarness({ agents: code, env: { MAX_TOOL_ROUNDS: '3' } });
    h.llm.respond(() => ({ toolCalls: [{ name: 'bash', arguments: { command: 'echo again' } }] }));
    await h.adapter.say('@code loop forever');
    await h.bridge.idle();
    expect(h.llm.requests).toHaveLength(4);
    expect((h.sandbox as FakeSandbox).calls).toHaveLength(3);
    expect(h.adapter.transcript()).toEqual([
      '[system]: @code stopped after 3 tool rounds; control is back with the humans.',
    ]);
  });

  it('reports timeouts and sandbox errors to the model as one line', async () => {
    const sandbox = new FakeSandbox((_key, command) => {
      if (command.startsWith('sleep')) return { output: 'partial', timedOut: true, exitCode: null };
      throw new (class extends Error {})('boom');
    });
    h = await startHarness({ agents: code, sandbox, env: { SANDBOX_TIMEOUT_S: '2' } });
    h.llm.script(
      'code',
      {
        toolCalls: [
          { name: 'bash', arguments: { command: 'sleep 1000' } },
          { name: 'bash', arguments: { command: 'x' } },
        ],
      },
      { content: 'ok' },
    );
    await h.adapter.say('@code sleep');
    await h.bridge.idle();
    expect(toolResultsOf(h.llm.requests[1])).toEqual([
      'partial\n[ERROR: Command timed out after 2s]',
      '[ERROR: the sandbox failed: boom]',
    ]);
    expect(agentOf(h.llm.requests[0] ?? { messages: [] })).toBe('code');
  });
});

describe('an endpoint that wants a key', () => {
  it('says to set one, and never shows the placeholder sent in its place', async () => {
    const llm = await startFakeOpenAI();
    try {
      const echo = (error: string) => ({
        status: 401,
        errorMessage: `Incorrect API key provided: ${error}. You can find your API key at https://platform.openai.com.`,
      });
      llm.respond((request) => echo(String(request.headers.authorization).replace(/^Bearer /, '')));
      const settings = { timeoutMs: 5_000, maxRetries: 0, stream: false };
      const keyless = createOpenAiClient({ baseURL: llm.baseURL, apiKey: undefined, ...settings });
      const failure = await keyless.complete({ model: 'm', messages: [] }).catch((error: unknown) => error);
      expect((failure as Error).message).toBe(
        'the model endpoint answered 401: it wants an API key: set OPENAI_API_KEY (or api_key_env in the agent file)',
      );
      // The key really sent was the placeholder: the message above is the only trace of it.
      expect(llm.requests[0]?.headers.authorization).toMatch(/^Bearer \S+$/);

      const wrong = createOpenAiClient({ baseURL: llm.baseURL, apiKey: 'sk-wrong', ...settings });
      expect(((await wrong.complete({ model: 'm', messages: [] }).catch((e: unknown) => e)) as Error).message).toMatch(
        /^the model endpoint answered 401: Incorrect API key provided: sk-wrong\./,
      );
    } finally {
      await llm.close();
    }
  });

  it('warns at start-up when agents use OpenAI without OPENAI_API_KEY', () => {
    const config = testConfig({ agents: [{ name: 'data' }, { name: 'local', endpoint: 'http://127.0.0.1:11434/v1' }] });
    const keyless = { ...config, agents: config.agents.map((a) => ({ ...a, apiKey: undefined })) };
    expect(startupWarnings(keyless)).toEqual([
      'OPENAI_API_KEY is not set, so @data will be refused by api.openai.com (npm start -- --check)',
    ]);
    expect(startupWarnings(config)).toEqual([]);
  });
});
