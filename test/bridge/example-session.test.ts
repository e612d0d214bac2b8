import { afterEach, describe, expect, it } from 'vitest';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import type { FakeReply, RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, newestOf, roomMessagesOf, startHarness } from '../helpers/harness.js';
import { turnState } from '../helpers/store-views.js';
import { block, dataOf, idsHidden } from '../helpers/untrusted.js';

const AGENTS = [
  { name: 'code', activation: 'mention' as const, tools: ['bash' as const] },
  { name: 'data', activation: 'always' as const },
  { name: 'reviewer', activation: 'always' as const },
];
const lastUserText = (r: RecordedRequest) => newestOf(r);

/** The design's example session, as the fake model plays it. */
function examplePlayer(request: RecordedRequest): FakeReply {
  const agent = agentOf(request);
  const last = request.messages.at(-1);
  const text = lastUserText(request);
  if (agent === 'data' && text.startsWith('[@user]:')) {
    return { content: '@code please load sales.csv and list the top 3 customers by total revenue.' };
  }
  if (agent === 'code' && last?.role === 'tool') {
    return { content: `@data top 3 customers by revenue:\n${dataOf(last.content)}` };
  }
  if (agent === 'code' && text.includes('@code please load sales.csv')) {
    return { toolCalls: [{ name: 'bash', arguments: { command: 'python3 top.py sales.csv' } }] };
  }
  if (agent === 'data' && text.includes('\n[@code]: @data top 3')) {
    return { content: 'Acme leads with 5200; the top 3 make up most of the revenue.' };
  }
  return { content: '[pass]' };
}

let h: Harness;
afterEach(async () => h?.close());

describe('the example session', () => {
  it('user asks @data, @data asks @code, @code runs bash, @data interprets, the rest pass', async () => {
    const sandbox = new FakeSandbox(() => ({ output: 'Acme 5200\nGlobex 3100\nInitech 900\n', exitCode: 0 }));
    h = await startHarness({ agents: AGENTS, sandbox });
    h.llm.respond(examplePlayer);

    await h.adapter.say('@data who are our top 3 customers in sales.csv?');
    await h.bridge.idle();

    expect(h.adapter.transcript()).toEqual([
      '[@data]: @code please load sales.csv and list the top 3 customers by total revenue.',
      '[@code]: @data top 3 customers by revenue:\nAcme 5200\nGlobex 3100\nInitech 900',
      '[@data]: Acme leads with 5200; the top 3 make up most of the revenue.',
    ]);
    expect(sandbox.calls).toEqual([
      { channelKey: 'test:room', command: 'python3 top.py sales.csv', timeoutMs: 30_000 },
    ]);

    // Who was asked, in order: @data (addressed), then the other always agent, @reviewer, which passes;
    // @code (the request, two rounds for the tool call); @data resumes with the answer; after its summary
    // only @reviewer wakes (an answer's mention is not a request) and passes.
    expect(h.llm.requests.map(agentOf)).toEqual(['data', 'reviewer', 'code', 'code', 'data', 'reviewer']);

    // Context: system prompt, then history as [@speaker]: text (own messages as assistant), then the turn's note.
    const dataSecond = h.llm.requests[4] as RecordedRequest;
    expect(dataSecond.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'user']);
    const shown = roomMessagesOf(dataSecond);
    expect(shown[0]?.content).toBe('[@user]: @data who are our top 3 customers in sales.csv?');
    expect(idsHidden(String(shown[2]?.content))).toBe(
      `[ran: python3 top.py sales.csv]\n[result]: ${block('tool:bash', 'Acme 5200\nGlobex 3100\nInitech 900\n')}\n` +
        '[@code]: @data top 3 customers by revenue:\nAcme 5200\nGlobex 3100\nInitech 900',
    );
    // The tool definition reached only the agent with the bash tool.
    expect(h.llm.requests[2]?.tools).toHaveLength(1);
    expect(h.llm.requests[0]?.tools).toBeUndefined();

    // Stored: 1 human + 3 agent messages (echoes deduplicated), with the tool run kept.
    const room = await h.store.rooms.open('test', 'room');
    const history = await h.store.rooms.history(room.id, 50);
    expect(history.map((m) => `${m.kind}:${m.author}`)).toEqual([
      'human:user',
      'agent:data',
      'agent:code',
      'agent:data',
    ]);
    expect(history[2]?.toolRuns).toEqual([
      { tool: 'bash', input: 'python3 top.py sales.csv', output: 'Acme 5200\nGlobex 3100\nInitech 900\n' },
    ]);
    expect(await turnState(h.store, room.platform, room.channel)).toEqual({ consecutive: 3, control: 'agents' });
  });

  it('the reviewer passing posts nothing, and speaks up when something is wrong', async () => {
    h = await startHarness({ agents: AGENTS });
    h.llm.respond((request) => {
      if (agentOf(request) === 'data') return { content: 'Revenue grew 300% last month.' };
      return { content: '[pass]' };
    });
    await h.adapter.say('how did we do?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@data]: Revenue grew 300% last month.']);
    expect(h.llm.requests.map(agentOf)).toEqual(['data', 'reviewer']);

    h.llm.respond((request) => {
      const agent = agentOf(request);
      if (agent === 'reviewer' && lastUserText(request).startsWith('[@data]: Revenue grew 400%')) {
        return { content: '@data 400% cannot be right: the totals only doubled. Please recheck.' };
      }
      if (agent === 'data' && lastUserText(request).startsWith('[@user]')) return { content: 'Revenue grew 400%.' };
      return { content: '[pass]' };
    });
    await h.adapter.say('and this month?');
    await h.bridge.idle();
    expect(h.adapter.transcript().slice(1)).toEqual([
      '[@data]: Revenue grew 400%.',
      '[@reviewer]: @data 400% cannot be right: the totals only doubled. Please recheck.',
    ]);
  });
});
