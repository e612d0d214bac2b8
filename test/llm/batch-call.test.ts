import { describe, expect, it } from 'vitest';
import { batchRoster, callBatch, prepareBatch } from '../../src/llm/batch-call.js';
import { createOpenAiClient } from '../../src/llm/client.js';
import { turnContext } from '../../src/llm/turn-context.js';
import type { RoomMessage } from '../../src/room/types.js';
import { batchAgentsOf, promptText, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { testConfig } from '../helpers/config.js';

const message = (id: number, content: string): RoomMessage => ({
  id,
  author: 'user',
  authorId: 'u',
  kind: 'human',
  content,
  mentions: [],
  toolRuns: [],
  at: id,
});

describe('the request for a batch', () => {
  const history = Array.from({ length: 60 }, (_, i) => message(i + 1, `message ${i + 1}: ${'words '.repeat(40)}`));

  it('shows the transcript the agent with the smallest history share would see, once, and the older messages recalled', async () => {
    const config = testConfig({
      agents: [
        { name: 'ana', model: 'm', activation: 'always', contextTokens: 32_000 },
        { name: 'ben', model: 'm', activation: 'always', contextTokens: 8_000 },
      ],
    });
    const recalled: Array<{ viewers: readonly string[]; before: number }> = [];
    const prepared = await prepareBatch({
      members: config.agents.map((agent) => ({ agent, situation: `${agent.name} observes` })),
      agentNames: ['ana', 'ben'],
      history,
      place: { room: 'test:room', audience: null },
      roomId: 1,
      settings: config.settings,
      sources: {
        recall: (_room, viewers) => async (_query, before) => {
          recalled.push({ viewers, before });
          return history.slice(0, 1);
        },
      },
    });
    const [room = '', older = ''] = prepared.transcript.split('\n\n>>> OLDER MESSAGES THAT MAY BE RELEVANT <<<\n');
    const shown = room.split('\n').filter((line) => line.startsWith('[@user]: message'));
    // ben's 8000-token budget leaves room for fewer messages than ana's: the window ben sees on his own.
    const alone = async (name: string) => {
      const agent = config.agents.find((a) => a.name === name);
      if (!agent) throw new Error(name);
      const { messages } = await turnContext({
        agent,
        agentNames: ['ana', 'ben'],
        place: { room: 'test:room', audience: null },
        roomId: 1,
        history,
        tools: [],
        settings: config.settings,
      });
      return messages.slice(1, -1).map((m) => String(m.content));
    };
    expect(shown).toEqual(await alone('ben'));
    expect((await alone('ana')).length).toBeGreaterThan(shown.length);
    expect(recalled).toHaveLength(1);
    expect(older.startsWith('[@user]: message 1:')).toBe(true);
    // Older than the shown transcript, and only what both members may see.
    expect(recalled[0]).toEqual({ viewers: ['ana', 'ben'], before: 60 - shown.length + 1 });
    expect(prepared.members.map((m) => m.segment.situation)).toEqual(['ana observes', 'ben observes']);
  });

  it('leaves out a member whose own parts do not fit its budget: it takes its own turn, which says so', async () => {
    const config = testConfig({
      agents: [
        { name: 'ana', model: 'm', activation: 'always' },
        { name: 'big', model: 'm', activation: 'always', contextTokens: 5_000, systemPrompt: 'rule '.repeat(2_000) },
      ],
    });
    const prepared = await prepareBatch({
      members: config.agents.map((agent) => ({ agent, situation: 'observe' })),
      agentNames: ['ana', 'big'],
      history: history.slice(-3),
      place: { room: 'test:room', audience: null },
      roomId: 1,
      settings: config.settings,
    });
    expect(prepared.members.map((m) => m.agent.name)).toEqual(['ana']);
    expect(prepared.unfit.map((a) => a.name)).toEqual(['big']);
  });
});

describe('the prefix every batch of a room shares', () => {
  it('is byte-identical up to the transcript end for two batches with different members, schema included', async () => {
    const config = testConfig({
      agents: [
        { name: 'ana', model: 'm', activation: 'always', tools: ['remember'] },
        { name: 'ben', model: 'm', activation: 'always' },
        { name: 'cy', model: 'm', tools: ['bash'] },
        { name: 'dee', model: 'm' },
      ],
    });
    const fake = await startFakeOpenAI({ usage: 'openai' });
    try {
      fake.respond((request) => ({
        agents: Object.fromEntries((batchAgentsOf(request) ?? []).map((name) => [name, '[pass]'])),
      }));
      const client = createOpenAiClient({
        baseURL: fake.baseURL,
        apiKey: 'k',
        timeoutMs: 10_000,
        maxRetries: 0,
        stream: false,
      });
      const history = Array.from({ length: 8 }, (_, i) => message(i + 1, `message ${i + 1}`));
      const sources = { knowledge: async () => [{ key: 'deadline', value: 'Friday' }] };
      const ask = async (names: readonly string[]) => {
        const prepared = await prepareBatch({
          members: config.agents
            .filter((a) => names.includes(a.name))
            .map((agent) => ({ agent, situation: 'observe' })),
          roster: batchRoster(config.agents, config.agents[0] as (typeof config.agents)[number]),
          agentNames: config.agents.map((a) => a.name),
          history,
          place: { room: 'test:room', audience: null },
          roomId: 1,
          settings: config.settings,
          sources,
        });
        const answer = await callBatch({
          client,
          model: 'm',
          transcript: prepared.transcript,
          seats: prepared.seats,
          agents: prepared.members.map((m) => m.segment),
          sharedTokens: prepared.sharedTokens,
          segmentTokens: prepared.members.map((m) => m.tokens),
        });
        expect(answer.ok).toBe(true);
        return promptText(fake.requests.at(-1) ?? { messages: [] }, 'prefix');
      };
      const first = await ask(['ana', 'ben']);
      const second = await ask(['cy', 'dee']);
      const end = first.indexOf('[@user]: message 8') + '[@user]: message 8'.length;
      expect(end).toBeGreaterThan(1000);
      expect(second.slice(0, end)).toBe(first.slice(0, end));
      // The schema leads the prompt, and every seat (with its knowledge) comes before the transcript.
      expect(first.startsWith('<|response_format|>')).toBe(true);
      expect(first.indexOf('deadline: Friday')).toBeLessThan(end);
      expect(first.slice(end)).toContain('"ana", "ben"');
      expect(second.slice(end)).toContain('"cy", "dee"');
    } finally {
      await fake.close();
    }
  });
});
