import { afterEach, describe, expect, it } from 'vitest';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type Harness, startHarness, toolResultsOf } from '../helpers/harness.js';
import { ask, bashTool, useFakeServer } from './client-fixture.js';

// deepseek-r1 on Ollama (and llama.cpp or vLLM without a reasoning parser) writes its reasoning into the content.
const r1Answer = '<think>\nThe user greets me. I should greet back, briefly.\n</think>\n\nHello there!';

describe('reasoning in the answer', () => {
  const server = useFakeServer();

  it('takes <think> blocks out of the reply and out of the streamed preview', async () => {
    server.fake.script('m', { dialect: 'ollama', content: r1Answer });
    const seen: string[] = [];
    const response = await server.client().complete(ask({ onText: (text) => seen.push(text) }));
    expect(response.content).toBe('Hello there!');
    expect(response.reasoning).toBe('The user greets me. I should greet back, briefly.');
    expect(seen.at(-1)).toBe('Hello there!');
    expect(seen.filter((text) => /think|<|greets/.test(text))).toEqual([]);
  });

  it('hides everything after an unclosed <think> while it streams', async () => {
    server.fake.script('m', { dialect: 'llamacpp', content: 'Sure. <think>hmm, let me reconsider the whole thing' });
    const seen: string[] = [];
    const response = await server.client().complete(ask({ onText: (text) => seen.push(text) }));
    expect(seen.filter((text) => /hmm|reconsider|<t/.test(text))).toEqual([]);
    expect(response.content).toBe('Sure.');
    expect(response.reasoning).toBe('hmm, let me reconsider the whole thing');
  });

  it('reads a </think> with no opening (the chat template opened it) as the end of reasoning', async () => {
    server.fake.script('m', { dialect: 'llamacpp', content: 'They want a number.\n</think>\n\n42' });
    const response = await server.client().complete(ask());
    expect(response).toMatchObject({ content: '42', reasoning: 'They want a number.' });
  });

  it('keeps reasoning fields apart from the reply (reasoning_content, reasoning)', async () => {
    server.fake.script(
      'm',
      { dialect: 'llamacpp', reasoning: 'First I add.', content: 'It is 4.' },
      { dialect: 'vllm', reasoning: 'Then I check.', content: 'Still 4.' },
    );
    const client = server.client({ stream: true });
    expect(await client.complete(ask())).toMatchObject({ content: 'It is 4.', reasoning: 'First I add.' });
    expect(await client.complete(ask())).toMatchObject({ content: 'Still 4.', reasoning: 'Then I check.' });
  });

  it("reads Mistral's content parts: text parts are the reply, thinking parts are reasoning, whole and streamed", async () => {
    const thought = 'They ask for a sum. Two and two make four.';
    server.fake.script(
      'm',
      { dialect: 'mistral', reasoning: thought, content: 'It is 4.' },
      { dialect: 'mistral', reasoning: thought, content: 'Still 4, streamed.' },
    );
    expect(await server.client().complete(ask())).toMatchObject({ content: 'It is 4.', reasoning: thought });
    const seen: string[] = [];
    const streamed = await server.client().complete(ask({ onText: (text) => seen.push(text) }));
    expect(streamed).toMatchObject({ content: 'Still 4, streamed.', reasoning: thought });
    expect(seen.at(-1)).toBe('Still 4, streamed.');
    expect(seen.filter((text) => /sum|Two/.test(text))).toEqual([]);
  });

  it('runs a <tool_call> written in the text (Hermes / Qwen template without a tool parser) as a tool call', async () => {
    const markup = 'Let me check.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>';
    server.fake.script('m', { dialect: 'vllm', content: markup });
    const seen: string[] = [];
    const response = await server.client().complete(ask({ tools: [bashTool], onText: (text) => seen.push(text) }));
    expect(response.content).toBe('Let me check.');
    expect(response.toolCalls).toEqual([{ id: expect.any(String), name: 'bash', arguments: '{"command":"ls -la"}' }]);
    expect(seen.filter((text) => text.includes('tool_call') || text.includes('ls -la'))).toEqual([]);
  });

  it('leaves <tool_call> text alone when no tools were offered', async () => {
    const markup = '<tool_call>{"name": "bash", "arguments": {}}</tool_call>';
    server.fake.script('m', { content: markup });
    const response = await server.client().complete(ask());
    expect(response).toMatchObject({ content: markup, toolCalls: [] });
  });
});

describe('in a room', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.close());

  it('says the model returned only reasoning instead of passing silently', async () => {
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.script('code', { dialect: 'ollama', reasoning: 'Hmm. Let me think about what they asked...', content: '' });
    await h.adapter.say('@code what now?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[system]: @code could not answer: the model returned only reasoning']);
  });

  it('posts the reply of a Mistral reasoning model, streamed, without its thinking', async () => {
    h = await startHarness({ agents: [{ name: 'code' }], env: { LLM_STREAM: 'true' } });
    h.llm.script('code', { dialect: 'mistral', reasoning: 'The user wants a greeting.', content: 'Hello!' });
    await h.adapter.say('@code say hi');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@code]: Hello!']);
  });

  it("says only reasoning came when a Mistral reasoning model's answer has thinking parts and no text", async () => {
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.script('code', { dialect: 'mistral', reasoning: 'Let me think about it some more...', content: '' });
    await h.adapter.say('@code what now?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[system]: @code could not answer: the model returned only reasoning']);
  });

  it('says the reply had no text, instead of passing silently, when nothing in it can be read', async () => {
    h = await startHarness({ agents: [{ name: 'code' }], env: { LLM_STREAM: 'true' } });
    h.llm.script(
      'code',
      { deltas: [{ role: 'assistant', content: [{ type: 'reference', reference_ids: [0] }] }] },
      { content: '' },
    );
    await h.adapter.say('@code anything?');
    await h.bridge.idle();
    await h.adapter.say('@code and now?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      "[system]: @code could not answer: the model's reply had no text",
      "[system]: @code could not answer: the model's reply had no text",
    ]);
  });

  it('passes quietly on an empty reply after the turn ran tools: the agent acted and has nothing to add', async () => {
    const sandbox = new FakeSandbox((_key, command) => ({ output: `ran ${command}`, exitCode: 0 }));
    h = await startHarness({ agents: [{ name: 'code', tools: ['bash'] }], sandbox });
    h.llm.script('code', { toolCalls: [{ name: 'bash', arguments: { command: 'touch done' } }] }, { content: '' });
    await h.adapter.say('@code touch the file');
    await h.bridge.idle();
    expect(sandbox.calls.map((call) => call.command)).toEqual(['touch done']);
    expect(h.adapter.transcript()).toEqual([]);
  });

  it('says so too when the answer is only a <think> block cut off at the output limit', async () => {
    h = await startHarness({ agents: [{ name: 'code' }], env: { LLM_STREAM: 'true' } });
    h.llm.script('code', { content: '<think>Step one, step two, step', finishReason: 'length' });
    await h.adapter.say('@code think hard');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[system]: @code could not answer: the model returned only reasoning (it reached its output limit)',
    ]);
  });

  it('runs a tool call written as <tool_call> text and posts only the final reply', async () => {
    const sandbox = new FakeSandbox((_key, command) => ({ output: `ran ${command}`, exitCode: 0 }));
    h = await startHarness({ agents: [{ name: 'code', tools: ['bash'] }], sandbox, env: { LLM_STREAM: 'true' } });
    h.llm.script(
      'code',
      { dialect: 'llamacpp', content: '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>' },
      { content: 'The folder is empty.' },
    );
    await h.adapter.say('@code what is here?');
    await h.bridge.idle();
    expect(sandbox.calls.map((call) => call.command)).toEqual(['ls']);
    expect(h.adapter.transcript()).toEqual(['[@code]: The folder is empty.']);
    expect(h.llm.requests[1]?.messages.at(-1)).toMatchObject({ role: 'tool' });
    expect(toolResultsOf(h.llm.requests[1])).toEqual(['ran ls']);
  });
});
