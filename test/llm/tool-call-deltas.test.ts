import { afterEach, describe, expect, it } from 'vitest';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import type { Dialect } from '../fakes/openai-server/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { ask, useFakeServer, writeFilesTool } from './client-fixture.js';

const twoWrites = [
  { name: 'write_files', arguments: { files: [{ filename: 'a.txt', content: 'alpha' }] } },
  { name: 'write_files', arguments: { files: [{ filename: 'b.txt', content: 'beta' }] } },
];

describe('streamed tool calls, as each server sends them', () => {
  const server = useFakeServer();

  const cases: Array<[Dialect, string]> = [
    ['openai', 'id and name first, arguments in pieces, keyed by index'],
    ['ollama', 'each call whole in one delta, index 0 for every call'],
    ['litellm', 'each call whole in one delta, index 0 for every call'],
    ['gemini', 'each call whole in one delta, no index'],
    ['ollama-old', 'each call whole in one delta, no index'],
    ['groq', 'each call whole in one delta, with its own index'],
  ];
  for (const [dialect, shape] of cases) {
    it(`${dialect}: ${shape} — two calls stay two calls`, async () => {
      server.fake.script('m', { dialect, toolCalls: twoWrites });
      const response = await server.client({ stream: true }).complete(ask({ tools: [writeFilesTool] }));
      expect(response.toolCalls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
        ['write_files', twoWrites[0]?.arguments],
        ['write_files', twoWrites[1]?.arguments],
      ]);
      expect(new Set(response.toolCalls.map((call) => call.id)).size).toBe(2);
    });
  }

  it('continues a delta without index by its id, and one with neither by the last call', async () => {
    server.fake.script('m', {
      finishReason: 'tool_calls',
      deltas: [
        { tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'write_files', arguments: '{"files":' } }] },
        { tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'write_files', arguments: '{"files":' } }] },
        { tool_calls: [{ id: 'call_a', function: { arguments: '["a"]}' } }] },
        { tool_calls: [{ function: { arguments: '["b"]}' } }] },
      ],
    });
    const response = await server.client({ stream: true }).complete(ask({ tools: [writeFilesTool] }));
    expect(response.toolCalls.map((call) => [call.id, call.name, call.arguments])).toEqual([
      ['call_a', 'write_files', '{"files":["a"]}'],
      ['call_b', 'write_files', '{"files":["b"]}'],
    ]);
  });

  it('gives a call that came without an id one, so its result can be matched', async () => {
    server.fake.script('m', {
      finishReason: 'tool_calls',
      deltas: [{ tool_calls: [{ type: 'function', function: { name: 'write_files', arguments: '{"files":[]}' } }] }],
    });
    const response = await server.client({ stream: true }).complete(ask({ tools: [writeFilesTool] }));
    expect(response.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_.+/), name: 'write_files', arguments: '{"files":[]}' },
    ]);
  });
});

describe('through the tool loop', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.close());

  it('runs both calls of an Ollama stream (index 0 for each) and feeds both results back', async () => {
    const sandbox = new FakeSandbox((_key, command) => ({ output: `ran ${command}`, exitCode: 0 }));
    h = await startHarness({
      agents: [{ name: 'code', tools: ['bash'] }],
      sandbox,
      env: { LLM_STREAM: 'true' },
    });
    h.llm.script(
      'code',
      {
        dialect: 'ollama',
        toolCalls: [
          { name: 'bash', arguments: { command: 'ls' } },
          { name: 'bash', arguments: { command: 'pwd' } },
        ],
      },
      { content: 'Both ran.' },
    );
    await h.adapter.say('@code look around');
    await h.bridge.idle();
    expect(sandbox.calls.map((call) => call.command)).toEqual(['ls', 'pwd']);
    expect(h.adapter.transcript()).toEqual(['[@code]: Both ran.']);
  });
});
