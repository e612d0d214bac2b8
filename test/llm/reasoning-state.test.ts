import { afterEach, describe, expect, it } from 'vitest';
import type { FakeReply } from '../fakes/openai-server/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';

const listFiles = { name: 'bash', arguments: { command: 'ls' } };

describe('the assistant message of a tool round goes back with its reasoning state', () => {
  let h: Harness | undefined;
  afterEach(async () => h?.close());

  async function secondRequestAssistant(firstRound: FakeReply, stream: boolean): Promise<unknown> {
    h = await startHarness({ agents: [{ name: 'code', tools: ['bash'] }], env: { LLM_STREAM: String(stream) } });
    h.llm.script('code', firstRound, { content: 'Listed.' });
    await h.adapter.say('@code list the files');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@code]: Listed.']);
    return h.llm.requests[1]?.messages.find((message) => message.role === 'assistant' && message.tool_calls);
  }

  for (const stream of [false, true]) {
    it(`DeepSeek / llama.cpp: reasoning_content (stream: ${stream})`, async () => {
      const assistant = await secondRequestAssistant(
        { dialect: 'llamacpp', reasoning: 'I should list the files first.', toolCalls: [listFiles] },
        stream,
      );
      expect(assistant).toMatchObject({ reasoning_content: 'I should list the files first.' });
    });

    it(`OpenRouter: reasoning and reasoning_details (stream: ${stream})`, async () => {
      const details = [
        {
          type: 'reasoning.text',
          text: 'Listing files comes first.',
          signature: 'sig-or-1',
          format: 'anthropic-claude-v1',
        },
      ];
      const assistant = await secondRequestAssistant(
        {
          dialect: 'openrouter',
          reasoning: 'Listing files comes first.',
          reasoningDetails: details,
          toolCalls: [listFiles],
        },
        stream,
      );
      expect(assistant).toMatchObject({
        reasoning: 'Listing files comes first.',
        reasoning_details: [{ ...details[0], index: 0 }],
      });
    });

    it(`Gemini: the thought signature on each tool call (stream: ${stream})`, async () => {
      const assistant = await secondRequestAssistant(
        { dialect: 'gemini', toolCalls: [{ ...listFiles, id: 'call_g1' }] },
        stream,
      );
      expect(assistant).toMatchObject({
        tool_calls: [
          {
            id: 'call_g1',
            type: 'function',
            function: { name: 'bash' },
            extra_content: { google: { thought_signature: 'sig-call_g1' } },
          },
        ],
      });
    });
  }
});
