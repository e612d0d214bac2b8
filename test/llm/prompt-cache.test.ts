import { afterEach, describe, expect, it } from 'vitest';
import { type RecordedRequest, repeatedPrefixShare } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, newestOf, roomMessagesOf, startHarness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const TOPICS = ['the launch date', 'pricing', 'the onboarding flow', 'support hours', 'the roadmap'];

/** Each agent answers once after every human message (with a few lines, like a real reply), then passes. */
function steadyReply(request: RecordedRequest): { content: string } {
  const agent = agentOf(request);
  const shown = roomMessagesOf(request).map((m) => String(m.content));
  let human = shown.length - 1;
  while (human >= 0 && !shown[human]?.startsWith('[@user]')) human--;
  const sinceHuman = shown.slice(human + 1);
  if (sinceHuman.some((text) => text.startsWith(`[@${agent}]`)) || request.messages.at(-2)?.role === 'assistant') {
    return { content: '[pass]' };
  }
  const about = newestOf(request).slice(0, 60);
  return {
    content: `${agent} on "${about}": here is my take, with the numbers we agreed on last week and one open question for the team.`,
  };
}

describe('a prompt that caches', () => {
  it('in a steady room (3 agents, 20 human messages) at least 80% of the input repeats an earlier prefix', async () => {
    h = await startHarness({
      agents: [
        {
          name: 'ana',
          activation: 'always',
          systemPrompt: `You are Ana, the planner. ${'Plan carefully. '.repeat(40)}`,
        },
        {
          name: 'ben',
          activation: 'always',
          systemPrompt: `You are Ben, the critic. ${'Question assumptions. '.repeat(40)}`,
        },
        { name: 'cy', activation: 'mention', systemPrompt: `You are Cy, the engineer. ${'Be precise. '.repeat(40)}` },
      ],
    });
    h.llm.respond(steadyReply);
    for (let i = 0; i < 20; i++) {
      const topic = TOPICS[i % TOPICS.length];
      await h.adapter.say(i % 3 === 0 ? `@cy what about ${topic}? (${i})` : `Thoughts on ${topic}? (${i})`);
      await h.bridge.idle();
    }
    const requests = h.llm.requests;
    expect(requests.length).toBeGreaterThan(50);
    // The layout before this one put the situation in the system prompt and slid the history by one message.
    expect(repeatedPrefixShare(requests)).toBeGreaterThanOrEqual(0.8);
  });
});
