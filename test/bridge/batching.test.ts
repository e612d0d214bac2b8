import { afterEach, describe, expect, it } from 'vitest';
import { defaultLlmFactory } from '../../src/bridge/index.js';
import { batchResponseFormat } from '../../src/llm/batch.js';
import type { LlmUsage } from '../../src/llm/client.js';
import {
  type AgentView,
  agentOfRequest,
  batchAgentsOf,
  batchParts,
  type FakeReply,
  perAgent,
  type RecordedRequest,
} from '../fakes/openai-server/index.js';
import { type TestAgent, testConfig } from '../helpers/config.js';
import { captureLogger, type Harness, roomMessagesOf, startHarness, toolResultsOf } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const batched = (requests: readonly RecordedRequest[]) => requests.map(batchAgentsOf).filter((names) => names);
/** Each request as who it was for: an agent's name, or the agents of a batch. */
const calls = (requests: readonly RecordedRequest[]) => requests.map((r) => batchAgentsOf(r) ?? agentOfRequest(r));
const on = { BATCHING: 'on', BATCH_TICK_MS: '20' };
/** A situation of about 1000 tokens: what an observer's segment in a batch carries. */
const observing = (name: string) => ({
  observe: `${name}: a new message arrived. ${'Keep the plan small and reversible. '.repeat(120)}`,
});
const always = (name: string, extra: Partial<TestAgent> = {}): TestAgent => ({
  name,
  model: 'shared',
  activation: 'always',
  ...extra,
});

/** Who spoke the newest message an agent was shown, and what they said. */
function newest(view: AgentView): { speaker: string; text: string } {
  const match = /\[(@[^\]]+|system)\]: ([\s\S]*)$/.exec(view.newest);
  return { speaker: match?.[1] ?? '', text: match?.[2] ?? '' };
}

/**
 * A room whose answers depend only on the agent and the newest message it sees: @ana takes up plans, @ben
 * answers @ana, @cy counts with its tools, @dee answers when asked, and @eve (another model) closes each thread
 * @ben opens.
 */
const scriptedRoom: TestAgent[] = [
  { name: 'ana', model: 'shared', activation: 'always' },
  { name: 'ben', model: 'shared', activation: 'always' },
  { name: 'cy', model: 'shared', activation: 'always', tools: ['bash'] },
  { name: 'dee', model: 'shared', activation: 'mention' },
  { name: 'eve', model: 'other', activation: 'always' },
];

const script = perAgent((view) => {
  const { speaker, text } = newest(view);
  const human = speaker === '@user';
  switch (view.agent) {
    case 'ana':
      return human && text.includes('plan') ? `Plan for "${text.slice(0, 30)}": two steps, owners named.` : '[pass]';
    case 'ben':
      return speaker === '@ana' ? `Agreed with @ana, on ${text.slice(10, 30)}.` : '[pass]';
    case 'cy': {
      if (!human || !text.includes('count')) return '[pass]';
      const results = toolResultsOf(view.request);
      if (view.batched || results.length === 0)
        return { toolCalls: [{ name: 'bash', arguments: { command: 'wc -l items' } }] };
      return `Counted: ${results[0]?.trim()} open items.`;
    }
    case 'dee':
      return view.situation.includes('asked for your action') ? `On it: ${text.slice(0, 20)}` : '[pass]';
    case 'eve':
      return speaker === '@ben' ? 'Noted, closing this thread.' : '[pass]';
    default:
      return '[pass]';
  }
});

async function play(batching: 'on' | 'off'): Promise<{ transcript: string[]; requests: RecordedRequest[] }> {
  const harness = await startHarness({ agents: scriptedRoom, env: { BATCHING: batching, BATCH_TICK_MS: '20' } });
  h = harness;
  harness.sandbox.exec = async () => ({ output: '7\n', exitCode: 0, timedOut: false });
  harness.llm.respond(script);
  for (const text of [
    'Let us plan the launch',
    'Please count the open items',
    '@dee plan the budget please',
    'thanks all',
  ]) {
    await harness.adapter.say(text);
    await harness.bridge.idle();
  }
  const result = { transcript: harness.adapter.transcript(), requests: [...harness.llm.requests] };
  await harness.close();
  h = undefined;
  return result;
}

describe('batched turns (BATCHING=on)', () => {
  it('posts the same messages as one call per agent, for a room whose answers depend on the latest messages', async () => {
    const alone = await play('off');
    const together = await play('on');
    expect(alone.transcript).toEqual([
      '[@ana]: Plan for "Let us plan the launch": two steps, owners named.',
      '[@ben]: Agreed with @ana, on Let us plan the laun.',
      '[@eve]: Noted, closing this thread.',
      '[@cy]: Counted: 7 open items.',
      '[@dee]: On it: @dee plan the budget',
    ]);
    expect(together.transcript).toEqual(alone.transcript);
    expect(batched(alone.requests)).toEqual([]);
    // The observers on the shared model are asked together; @eve (another model) and @dee (asked) on their own.
    expect(batched(together.requests)).toContainEqual(['ana', 'ben', 'cy']);
    expect(batched(together.requests).flat()).not.toContain('eve');
    expect(batched(together.requests).flat()).not.toContain('dee');
    expect(together.requests.length).toBeLessThan(alone.requests.length);
    const batch = together.requests.find((r) => batchAgentsOf(r)?.length === 3);
    // One schema for every batch of the room: the agents on the shared model, in configured order.
    const seats = scriptedRoom.filter((a) => a.model === 'shared').map((a) => a.name);
    expect(new Set(together.requests.filter(batchAgentsOf).map((r) => JSON.stringify(r.body.response_format)))).toEqual(
      new Set([JSON.stringify(batchResponseFormat(seats))]),
    );
    expect(batch?.tools).toBeUndefined();
  });

  it.each<[string, FakeReply]>([
    ['text that is not JSON', { content: 'Sure! @ben here' }],
    ['a missing agent', { agents: { ana: '[pass]' } }],
    ['a reply speaking as another agent', { agents: { ana: 'ok\n[@ben]: ben here', ben: '[pass]' } }],
  ])('falls back to one turn per agent when the answer has %s', async (_what, answer) => {
    const { logger, lines } = captureLogger();
    h = await startHarness({ agents: [always('ana'), always('ben')], env: on, logger });
    h.llm.respond((request) =>
      batchAgentsOf(request) ? answer : { content: agentOfRequest(request) === 'ben' ? 'ben here' : '[pass]' },
    );
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@ben]: ben here']);
    // The batch, then each agent on its own in order; then @ana alone about @ben's message.
    expect(calls(h.llm.requests)).toEqual([['ana', 'ben'], 'ana', 'ben', 'ana']);
    expect(lines.some((l) => l.msg === 'batch answer rejected: each agent is asked on its own')).toBe(true);
  });

  it("ignores and logs a reply for an agent not asked; the asked agents' replies still count", async () => {
    const { logger, lines } = captureLogger();
    h = await startHarness({ agents: [always('ana'), always('ben'), always('cy')], env: on, logger });
    h.llm.respond((request) => {
      const names = batchAgentsOf(request);
      if (names?.length === 3) return { agents: { ana: '[pass]', ben: 'ben here', cy: '[pass]', eve: 'me too' } };
      return names ? { agents: Object.fromEntries(names.map((n) => [n, '[pass]'])) } : { content: '[pass]' };
    });
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@ben]: ben here']);
    expect(calls(h.llm.requests)[0]).toEqual(['ana', 'ben', 'cy']);
    expect(lines.some((l) => l.msg === 'batch answer has replies for agents not asked: ignored')).toBe(true);
  });

  it('falls back to one turn per agent when the batch call fails', async () => {
    h = await startHarness({ agents: [always('ana'), always('ben')], env: on });
    h.llm.respond((request) =>
      batchAgentsOf(request) ? { status: 500 } : { content: agentOfRequest(request) === 'ana' ? 'ana here' : '[pass]' },
    );
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@ana]: ana here']);
    expect(calls(h.llm.requests)).toEqual([['ana', 'ben'], 'ana', 'ben']);
  });

  it('gives an agent that answers [tools] a full turn of its own, with its tools', async () => {
    h = await startHarness({ agents: [always('ana'), always('cy', { tools: ['bash'] })], env: on });
    h.sandbox.exec = async () => ({ output: '42\n', exitCode: 0, timedOut: false });
    // cy needs bash for a question: in a batch that is [tools], on its own a tool call, then the answer.
    h.llm.respond(
      perAgent((view) => {
        if (view.agent !== 'cy' || !view.newest.startsWith('[@user]')) return '[pass]';
        const [result] = toolResultsOf(view.request);
        return result
          ? `The answer is ${result.trim()}.`
          : { toolCalls: [{ name: 'bash', arguments: { command: 'echo 42' } }] };
      }),
    );
    await h.adapter.say('what is six times seven?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@cy]: The answer is 42.']);
    expect(calls(h.llm.requests)).toEqual([['ana', 'cy'], 'cy', 'cy', 'ana']);
    expect(h.llm.requests[1]?.tools?.length).toBeGreaterThan(0);
    const newest = (await history(h.store, 'test', 'room', 10)).at(-1);
    expect(newest?.toolRuns).toEqual([{ tool: 'bash', input: 'echo 42', output: '42\n' }]);
  });

  it('never delays a lone agent: with nothing to share a call with, it is asked at once, with its tools', async () => {
    // A ten-minute heartbeat: a turn that waited for it would never finish within the test.
    const agents = [always('ana', { model: 'a', tools: ['bash'] }), always('ben', { model: 'b' })];
    h = await startHarness({ agents, env: { BATCHING: 'on', BATCH_TICK_MS: '600000' } });
    h.llm.respond(perAgent((view) => (view.newest.startsWith('[@user]') ? `${view.agent} here` : '[pass]')));
    await h.adapter.say('hello');
    await h.bridge.idle();
    // Two observers, but on different models: each is asked on its own, at once.
    expect(h.adapter.transcript()).toEqual(['[@ana]: ana here']);
    expect(calls(h.llm.requests)).toEqual(['ana', 'ben']);
    expect(h.llm.requests[0]?.tools?.length).toBeGreaterThan(0);
  });

  it('packs a batch within the smallest budget less BATCH_RESERVE_TOKENS; the rest is asked at the next tick', async () => {
    // Each situation is about 1000 tokens, the shared part (rules, four short seats) under 1000: two segments fit
    // in 16000 - 13000 with the shared part, three do not.
    const agents = ['a', 'b', 'c', 'd'].map((name) =>
      always(name, { contextTokens: 16_000, prompts: observing(name) }),
    );
    h = await startHarness({ agents, env: { ...on, BATCH_RESERVE_TOKENS: '13000' } });
    h.llm.respond(
      perAgent((view) => (view.agent === 'd' && view.newest.startsWith('[@user]') ? 'd answers' : '[pass]')),
    );
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@d]: d answers']);
    expect(calls(h.llm.requests).slice(0, 2)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('records the usage of a batched call for its agents, split so that it adds up to the call', async () => {
    const usage: LlmUsage[] = [];
    h = await startHarness({
      agents: [
        always('ana'),
        always('ben', { prompts: { observe: `Speak only when a figure is wrong. ${'Check it twice. '.repeat(60)}` } }),
      ],
      env: on,
      llm: (config) => {
        const make = defaultLlmFactory(config);
        return (agent) => {
          const client = make(agent);
          return {
            complete: async (request) => {
              const response = await client.complete(request);
              if (response.usage) usage.push(response.usage);
              return response;
            },
          };
        };
      },
    });
    h.llm.respond(() => ({ agents: { ana: '[pass]', ben: '[pass]' } }));
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(calls(h.llm.requests)).toEqual([['ana', 'ben']]);
    const [call] = usage;
    const rows = await h.store.usage.inRoom('test:room');
    expect(rows.map((r) => [r.agent, r.calls])).toEqual([
      ['ana', 1],
      ['ben', 1],
    ]);
    const sum = (key: 'input' | 'cached' | 'output') => rows.reduce((total, row) => total + row[key], 0);
    expect({ input: sum('input'), cached: sum('cached'), output: sum('output') }).toEqual(call);
    // Each carries half the shared part and its own segment: ben's long situation is his.
    expect(rows[1]?.input).toBeGreaterThan((rows[0]?.input ?? 0) + 200);
  });

  it('holds a batched call for each of its agents against the spending limits, and settles each its share', async () => {
    const price = { input: 1, cached: 1, output: 4 };
    h = await startHarness({
      agents: [always('ana', { price, maxOutputTokens: 100 }), always('ben', { price, maxOutputTokens: 300 })],
      env: { ...on, SPEND_LIMIT_USD_DAY: '5' },
    });
    h.llm.respond(() => ({ agents: { ana: '[pass]', ben: '[pass]' } }));
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(calls(h.llm.requests)).toEqual([['ana', 'ben']]);
    // One call, capped at both agents' caps together.
    expect(h.llm.requests[0]?.body.max_tokens).toBe(400);
    const day = new Date().toISOString().slice(0, 10);
    const spend = new Map((await h.store.spend.day(day)).map((row) => [row.scope, row]));
    const ana = spend.get('agent:ana')?.spent ?? 0;
    const ben = spend.get('agent:ben')?.spent ?? 0;
    expect(ana).toBeGreaterThan(0);
    expect(ben).toBeGreaterThan(0);
    expect(spend.get('bridge')).toEqual({ scope: 'bridge', spent: ana + ben, reserved: 0 });
    expect(spend.get('room:test:room')?.spent).toBe(ana + ben);
  });

  it('skips the answer of an agent whose turn was stopped while the batch call was out; the others still count', async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    h = await startHarness({ agents: [always('ana'), always('ben')], env: on });
    h.llm.respond(async (request) => {
      if (!batchAgentsOf(request)) return { content: '[pass]' };
      await released;
      return { agents: { ana: 'ana answers', ben: 'ben answers' } };
    });
    await h.adapter.say('hello');
    await until(() => h?.llm.requests.length === 1);
    expect(await h.adapter.command('pass', 'ana')).toMatch(/ana/);
    release();
    await h.bridge.idle();
    expect(h.adapter.transcript().filter((line) => line.startsWith('[@'))).toEqual(['[@ben]: ben answers']);
  });

  it('never batches a private exchange: its observers are asked one at a time', async () => {
    // @ana asks @ben inside a private exchange, then resumes; her resumed reply wakes @ben and @cy, who see the
    // same messages. Without privacy the two are asked together.
    const script = perAgent((view) => {
      if (view.agent === 'ana') {
        if (view.newest.startsWith('[@user]')) return '@ben can you check the numbers?';
        if (view.newest.startsWith('[@ben]: Checked')) return 'Thanks, all done.';
      }
      if (view.agent === 'ben' && view.newest.includes('check the numbers')) return 'Checked: they hold.';
      return '[pass]';
    });
    const observersOfResume = async (privacy: 'mentions' | 'off') => {
      h = await startHarness({
        agents: [always('ana'), always('ben'), always('cy')],
        env: { ...on, PRIVACY: privacy },
      });
      h.llm.respond(script);
      await h.adapter.say('@ana @ben @cy what now?');
      await h.bridge.idle();
      expect(h.adapter.transcript()).toContain('[@ana]: Thanks, all done.');
      const result = batched(h.llm.requests);
      await h.close();
      h = undefined;
      return result;
    };
    expect(await observersOfResume('off')).toContainEqual(['ben', 'cy']);
    expect(await observersOfResume('mentions')).toEqual([]);
  });

  it('asks the awaited agents of a request one after another: each sees the answers before it', async () => {
    h = await startHarness({ agents: [always('ana'), always('ben'), always('cy')], env: on });
    h.llm.respond(
      perAgent((view) => {
        if (view.agent === 'ana' && view.newest.startsWith('[@user]')) return '@ben @cy how many tests fail?';
        if (view.situation.includes('asked for your action')) return `${view.agent}: two fail`;
        return '[pass]';
      }),
    );
    await h.adapter.say('status?');
    await h.bridge.idle();
    expect(h.adapter.transcript().slice(0, 3)).toEqual([
      '[@ana]: @ben @cy how many tests fail?',
      '[@ben]: ben: two fail',
      '[@cy]: cy: two fail',
    ]);
    const cy = h.llm.requests.find(
      (r) => !batchAgentsOf(r) && agentOfRequest(r) === 'cy' && roomMessagesOf(r).length > 2,
    );
    expect(roomMessagesOf(cy ?? { messages: [] }).map((m) => m.content)).toContain('[@ben]: ben: two fail');
    // The batches there were came later (the observers of ana's resumed reply), never about her question.
    const question = '[@ana]: @ben @cy how many tests fail?';
    expect(h.llm.requests.filter((r) => batchAgentsOf(r) && batchParts(r).transcript.endsWith(question))).toEqual([]);
  });

  it('ends the round at the first reply: observers still waiting for a tick are not asked', async () => {
    const agents = ['a', 'b', 'c', 'd'].map((name) =>
      always(name, { contextTokens: 16_000, prompts: observing(name) }),
    );
    h = await startHarness({ agents, env: { ...on, BATCH_RESERVE_TOKENS: '13000' } });
    h.llm.respond(
      perAgent((view) => (view.agent === 'a' && view.newest.startsWith('[@user]') ? 'a answers' : '[pass]')),
    );
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@a]: a answers']);
    // a's reply ends the first round before c and d are sent; its own round asks b and c, then d.
    expect(calls(h.llm.requests)).toEqual([['a', 'b'], ['b', 'c'], 'd']);
  });

  it('asks an observer again on its own when the room changed after its batched answer', async () => {
    // @ana wants its tools (a turn of its own), and fails there; the failure line is news to @ben, whose batched
    // answer, written before it, did not see it.
    const agents = [always('ana'), always('ben'), always('cy')];
    h = await startHarness({ agents, env: on });
    h.llm.respond((request) => {
      if (batchAgentsOf(request)) return { agents: { ana: '[tools]', ben: 'ben, from the batch', cy: '[pass]' } };
      if (agentOfRequest(request) === 'ana') return { status: 500 };
      return { content: agentOfRequest(request) === 'ben' ? 'ben, having seen the failure' : '[pass]' };
    });
    await h.adapter.say('hello');
    await h.bridge.idle();
    const transcript = h.adapter.transcript();
    expect(transcript[0]).toMatch(/^\[system\]: @ana could not answer/);
    expect(transcript[1]).toBe('[@ben]: ben, having seen the failure');
  });

  it('batches only agents that see the same room, and never across API keys', async () => {
    h = await startHarness({
      agents: [],
      env: { ...on, PRIVACY: 'mentions' },
      config: (baseURL) => {
        const config = testConfig({
          agents: [always('ana'), always('ben'), always('cy'), always('dee')],
          env: { OPENAI_BASE_URL: baseURL, LLM_MAX_RETRIES: '0', ...on, PRIVACY: 'mentions' },
        });
        // dee runs on the same endpoint and model with another account's key.
        return { ...config, agents: config.agents.map((a) => (a.name === 'dee' ? { ...a, apiKey: 'other-key' } : a)) };
      },
    });
    h.llm.respond(perAgent((view) => (view.newest.includes('secret') && view.agent === 'ana' ? 'noted' : '[pass]')));
    await h.adapter.say('@ana a secret plan'); // only @ana sees this exchange
    await h.bridge.idle();
    await h.adapter.say('hello all');
    await h.bridge.idle();
    // About "hello all", ben and cy see the same room; ana saw more, dee has its own key.
    expect(batched(h.llm.requests)).toEqual([['ben', 'cy']]);
    expect(calls(h.llm.requests).filter((c) => c === 'ana' || c === 'dee')).toEqual(['ana', 'ana', 'dee']);
  });
});
