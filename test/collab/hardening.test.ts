import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, situationOf, startHarness, toolResultsOf } from '../helpers/harness.js';
import { requests, turnState } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';

let h: Harness;
afterEach(async () => h?.close());

describe('no way around the turn limit and /pass', () => {
  it('one turn posting many messages stops at TURN_LIMIT, and its final reply is not posted', async () => {
    h = await startHarness({ agents: [{ name: 'chatty', tools: ['send_channel_message'] }], env: { TURN_LIMIT: '3' } });
    const calls = Array.from({ length: 8 }, (_, i) => ({
      name: 'send_channel_message',
      arguments: { channel: 'here', message: `update ${i + 1}` },
    }));
    h.llm.script('chatty', { toolCalls: calls }, { content: 'done' });
    await h.adapter.say('@chatty report');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@chatty]: update 1',
      '[@chatty]: update 2',
      '[@chatty]: update 3',
      expect.stringMatching(/^\[system\]: @human 3 agent messages in a row/),
    ]);
    const results = toolResultsOf(h.llm.requests[1]);
    expect(results.slice(0, 3)).toEqual(['Posted in here.', 'Posted in here.', 'Posted in here.']);
    expect(results[3]).toBe('[ERROR: the humans have control in here (turn limit); nothing was posted]');
  });

  it('/pass stops a batch of tool calls between two of them', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sandbox = new (await import('../fakes/fake-sandbox.js')).FakeSandbox(async () => {
      await gate;
      return { output: 'ok', exitCode: 0 };
    });
    h = await startHarness({ agents: [{ name: 'code', tools: ['bash'] }], sandbox });
    h.llm.script('code', {
      toolCalls: [
        { name: 'bash', arguments: { command: 'first' } },
        { name: 'bash', arguments: { command: 'second' } },
      ],
    });
    await h.adapter.say('@code run both');
    await until(() => sandbox.calls.length === 1);
    await h.adapter.command('pass');
    release();
    await h.bridge.idle();
    expect(sandbox.calls.map((c) => c.command)).toEqual(['first']);
    expect(h.adapter.posts).toEqual([]);
  });

  it('refuses a request into a room where the humans hold control, instead of waiting for the deadline', async () => {
    h = await startHarness({ agents: [{ name: 'pm', tools: ['send_channel_message'] }, { name: 'code' }] });
    await h.adapter.command('pass', '', { channel: 'other' });
    h.llm.script(
      'pm',
      {
        toolCalls: [
          {
            name: 'send_channel_message',
            arguments: { channel: '#other', message: '@code help?', request_reply: ['code'] },
          },
        ],
      },
      { content: 'ok' },
    );
    await h.adapter.say('@pm ask in other');
    await h.bridge.idle();
    expect(toolResultsOf(h.llm.requests[1])).toEqual([
      '[ERROR: the humans have control in #other (/pass); nothing was posted]',
    ]);
    expect(await requests(h.store)).toEqual([]);
  });
});

describe('requests across rooms when one of them is handed back', () => {
  it('resumes a requester in another room, with who did not answer, when the target room hands back', async () => {
    h = await startHarness({ agents: [{ name: 'pm', tools: ['send_channel_message'] }, { name: 'code' }] });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'code') return { hang: true };
      if (/reached its deadline/.test(situationOf(r))) return { content: 'Nobody could help; I will continue alone.' };
      if (r.messages.some((m) => m.role === 'tool')) return { content: 'Asked in #other.' };
      return {
        toolCalls: [
          {
            name: 'send_channel_message',
            arguments: { channel: '#other', message: '@code help?', request_reply: ['code'] },
          },
        ],
      };
    });
    await h.adapter.say('@pm ask in other');
    await until(() => h.llm.requests.some((r) => agentOf(r) === 'code'));
    expect(await h.adapter.command('pass', '', { channel: 'other' })).toMatch(/Control is with the humans/);
    await h.bridge.idle();
    expect(h.adapter.transcript('other')).toEqual(['[@pm]: @code help?']);
    expect(h.adapter.transcript()).toEqual([
      '[@pm]: Asked in #other.',
      '[@pm]: Nobody could help; I will continue alone.',
    ]);
    expect(situationOf(h.llm.requests.at(-1) as RecordedRequest)).toContain('Did not answer: @code');
  });

  it('resumes a requester at once when an awaited agent cannot answer (its model fails)', async () => {
    h = await startHarness({ agents: [{ name: 'pm' }, { name: 'code' }] });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'code') return { status: 500, errorMessage: 'model down' };
      if (/Could not answer: @code/.test(situationOf(r))) return { content: 'I will do it myself then.' };
      return { content: '@code can you check the totals?' };
    });
    await h.adapter.say('@pm check the totals');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@pm]: @code can you check the totals?',
      '[system]: @code could not answer: the model endpoint answered 500: model down',
      '[@pm]: I will do it myself then.',
    ]);
  });

  it("a deadline stops only the participant's turn for that request, not other work", async () => {
    h = await startHarness({
      agents: [{ name: 'pm', tools: ['send_channel_message'] }, { name: 'slow' }],
      env: { REPLY_TIMEOUT_S: '1' },
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'slow') return { delayMs: 2500, content: 'Here is my careful answer for the human.' };
      if (/reached its deadline/.test(situationOf(r))) return { content: 'Going on without them.' };
      if (r.messages.some((m) => m.role === 'tool')) return { content: 'Asked.' };
      return {
        toolCalls: [
          {
            name: 'send_channel_message',
            arguments: { channel: '#lab', message: '@slow quick one?', request_reply: ['slow'] },
          },
        ],
      };
    });
    await h.adapter.say('@slow think about this', { channel: 'lab' }); // slow is busy for 2.5 s in #lab
    await until(() => h.llm.requests.length === 1);
    await h.adapter.say('@pm ask slow');
    await until(() => h.adapter.transcript().length === 2);
    await h.bridge.idle();
    // @slow's answer to the human was not cut off by the request's deadline (the request was posted meanwhile); the
    // room is told that @slow did not answer the request in time.
    expect([...h.adapter.transcript('lab')].sort()).toEqual([
      '[@pm]: @slow quick one?',
      '[@slow]: Here is my careful answer for the human.',
      '[system]: Request #1 from @pm reached its deadline: @slow did not answer in time; @pm goes on without it.',
    ]);
    expect(h.adapter.transcript()).toEqual(['[@pm]: Asked.', '[@pm]: Going on without them.']);
  });
});

describe('private chats and the tool-round limit', () => {
  it('a private chat that hit its turn limit can be started again from a public turn', async () => {
    const tools = ['chat_request' as const, 'chat_response' as const, 'chat' as const];
    h = await startHarness({
      agents: [
        { name: 'a', tools },
        { name: 'b', tools },
      ],
      env: { TURN_LIMIT: '4' },
    });
    const request = await h.store.chats.create('a', 'b', 'sync', Date.now(), 60_000);
    await h.store.chats.setStatus(request.id, 'accepted');
    let n = 0;
    h.llm.respond((r) => {
      const inPrivate = situationOf(r).includes('private conversation');
      if (inPrivate) return { content: `${agentOf(r)} private ${++n}` };
      if (agentOf(r) === 'a' && !r.messages.some((m) => m.role === 'tool')) {
        return { toolCalls: [{ name: 'chat', arguments: { to: 'b', message: `hello b ${++n}` } }] };
      }
      return { content: '[pass]' };
    });
    await h.adapter.say('@a talk to b');
    await h.bridge.idle();
    const privateRoom = await h.store.rooms.open('private', 'a+b');
    const first = await h.store.rooms.history(privateRoom.id, 100);
    expect(first.filter((m) => m.kind === 'agent')).toHaveLength(4);
    expect((await turnState(h.store, privateRoom.platform, privateRoom.channel)).control).toBe('humans');

    await h.adapter.say('@a once more');
    await h.bridge.idle();
    const second = (await h.store.rooms.history(privateRoom.id, 100)).filter((m) => m.kind === 'agent');
    expect(second).toHaveLength(8);
  });

  it('does not post a [pass] that ends a turn cut off by MAX_TOOL_ROUNDS', async () => {
    h = await startHarness({ agents: [{ name: 'code', tools: ['bash'] }], env: { MAX_TOOL_ROUNDS: '1' } });
    h.llm.respond(() => ({ content: '[pass]', toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] }));
    await h.adapter.say('@code go');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[system]: @code stopped after 1 tool rounds; control is back with the humans.',
    ]);
  });
});
