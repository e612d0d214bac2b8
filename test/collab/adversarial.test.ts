/**
 * Loop defence, adversarially: conversations built to run away must end by themselves, within the
 * turn limit and mostly far earlier. Each prints how many agent messages it took.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FakeReply, RecordedRequest } from '../fakes/openai-server/index.js';
import type { TestAgent } from '../helpers/config.js';
import { agentOf, type Harness, startHarness } from '../helpers/harness.js';

let h: Harness;
afterEach(async () => h?.close());

const results: string[] = [];
afterAll(() => {
  console.log(`Adversarial loop suite (TURN_LIMIT 20):\n${results.map((r) => `  ${r}`).join('\n')}`);
});

const pair: TestAgent[] = [
  { name: 'a', activation: 'always' },
  { name: 'b', activation: 'always' },
];

async function play(
  name: string,
  responder: (request: RecordedRequest, n: number) => FakeReply,
  options: { agents?: TestAgent[]; opening?: string; env?: Record<string, string> } = {},
): Promise<number> {
  h = await startHarness({ agents: options.agents ?? pair, env: { TURN_LIMIT: '20', ...options.env } });
  let n = 0;
  h.llm.respond((request) => responder(request, ++n));
  await h.adapter.say(options.opening ?? '@a start');
  await h.bridge.idle();
  const count = h.adapter.posts.filter((p) => p.agent !== null).length;
  results.push(`${name}: ${count} agent messages, ${h.llm.requests.length} model calls`);
  return count;
}

describe('adversarial loops end by themselves', () => {
  it('two agents thanking each other', async () => {
    const count = await play('two agents thanking each other', (r) =>
      agentOf(r) === 'a' ? { content: 'Thanks so much @b!' } : { content: 'Thank you @a, really!' },
    );
    // @a answers (addressed) with an acknowledgement, which wakes no one; @b (always) has its turn in the
    // same round and its thanks reach @a, whose repeated thanks are no progress: the exchange ends there.
    expect(count).toBe(3);
  });

  it('two agents each ending with a question to the other', async () => {
    const count = await play('two agents each ending with a question', (r, n) =>
      agentOf(r) === 'a'
        ? { content: `Point ${n}: the data says ${n * 7}. What do you think, @b?` }
        : { content: `On point ${n}: I see it differently. And you, @a?` },
    );
    expect(count).toBeLessThanOrEqual(20);
    expect(h.adapter.transcript().at(-1)).toMatch(/^\[system\]: @human 20 agent messages in a row/);
  });

  it('an error message that mentions an agent', async () => {
    const count = await play(
      'an error message that mentions an agent',
      (r) => (agentOf(r) === 'a' ? { status: 500, errorMessage: 'ask @b instead' } : { content: '@a I can help!' }),
      {
        agents: [
          { name: 'a', activation: 'mention' },
          { name: 'b', activation: 'mention' },
        ],
      },
    );
    expect(count).toBe(0);
    expect(h.adapter.transcript()).toEqual([
      '[system]: @a could not answer: the model endpoint answered 500: ask @b instead',
    ]);
  });

  it('a mention inside a code block', async () => {
    const count = await play(
      'a mention inside a code block',
      (r) =>
        agentOf(r) === 'a'
          ? { content: 'Run this:\n```\n@b deploy now\n```\nor `@b` by hand.' }
          : { content: 'deploying!' },
      {
        agents: [
          { name: 'a', activation: 'mention' },
          { name: 'b', activation: 'mention' },
        ],
      },
    );
    expect(count).toBe(1);
  });

  it('<world>pass</world> inside quotes', async () => {
    const count = await play('<world>pass</world> inside quotes', (r, n) =>
      agentOf(r) === 'a'
        ? { content: `Note ${n}: to stop, an agent writes "<world>pass</world>" — @b do not do that.` }
        : { content: `Reply ${n}: noted, @a.` },
    );
    expect(count).toBeLessThanOrEqual(20);
  });

  it('a long reply split into chunks', async () => {
    const long = (n: number, who: string) => `Part ${n} for @${who}:\n${'detail line\n'.repeat(600)}`;
    const count = await play(
      'a long reply split into chunks',
      (r, n) => (agentOf(r) === 'a' ? { content: long(n, 'b') } : { content: `${long(n, 'a')}done` }),
      { env: { TURN_LIMIT: '20' } },
    );
    expect(count).toBeLessThanOrEqual(20);
    // Each reply is one router message, however many chunks it was posted as.
    const room = await h.store.rooms.open('test', 'room');
    const agentMessages = (await h.store.rooms.history(room.id, 100)).filter((m) => m.kind === 'agent');
    expect(agentMessages).toHaveLength(count);
  });

  it('two agents that keep talking across human "lol"s are paused by the pair guard', async () => {
    h = await startHarness({ agents: pair, env: { TURN_LIMIT: '12' } });
    let n = 0;
    h.llm.respond((r) => ({ content: `${agentOf(r)} argues point ${++n}` }));
    let humans = 0;
    for (; humans < 6; humans++) {
      await h.adapter.say('lol');
      await h.bridge.idle();
      if (h.adapter.transcript().some((l) => l.includes('no longer wake each other'))) break;
    }
    const count = h.adapter.posts.filter((p) => p.agent !== null).length;
    results.push(
      `two agents across ${humans + 1} human "lol"s: ${count} agent messages before the pair guard paused them`,
    );
    expect(h.adapter.transcript().filter((l) => l.includes('no longer wake each other'))).toHaveLength(1);
    expect(count).toBeLessThanOrEqual(33);
    // After the pause, a human message wakes one of them, but they no longer wake each other.
    const before = h.adapter.posts.length;
    await h.adapter.say('lol');
    await h.bridge.idle();
    expect(h.adapter.posts.slice(before).filter((p) => p.agent !== null)).toHaveLength(1);
  });
});
