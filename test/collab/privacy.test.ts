import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, newestOf, situationOf, startHarness, toolResultsOf } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';

let h: Harness;
afterEach(async () => h?.close());

const sees = (requests: RecordedRequest[], agent: string, marker: string) =>
  requests.filter((r) => agentOf(r) === agent && JSON.stringify(r.messages).includes(marker)).length;

describe('privacy', () => {
  it("keeps a DM out of every other agent's context", async () => {
    h = await startHarness({
      agents: [
        { name: 'a', activation: 'always' },
        { name: 'b', activation: 'always' },
      ],
    });
    h.llm.respond((r) => ({ content: agentOf(r) === 'a' ? 'noted, privately' : '[pass]' }));
    const marker = 'MARKER-7f3a9c';
    await h.adapter.say(`my secret is ${marker}`, { channel: 'dm-a-user', direct: 'a' });
    await h.bridge.idle();
    await h.adapter.say('hello everyone');
    await h.bridge.idle();
    expect(sees(h.llm.requests, 'a', marker)).toBeGreaterThan(0);
    expect(sees(h.llm.requests, 'b', marker)).toBe(0);
  });

  it('with PRIVACY=mentions, shows an agent only public messages, its mentions and its own', async () => {
    h = await startHarness({
      agents: [
        { name: 'a', activation: 'mention' },
        { name: 'b', activation: 'mention' },
        { name: 'c', activation: 'always' },
      ],
      env: { PRIVACY: 'mentions' },
    });
    h.llm.respond(() => ({ content: '[pass]' }));
    const marker = 'MARKER-1b2c3d';
    for (const text of [`@a between us: ${marker}`, 'public note for all', '@b what do you think?']) {
      await h.adapter.say(text);
      await h.bridge.idle();
    }
    expect(sees(h.llm.requests, 'a', marker)).toBeGreaterThan(0);
    expect(sees(h.llm.requests, 'b', marker)).toBe(0);
    expect(sees(h.llm.requests, 'c', marker)).toBe(0);
    expect(sees(h.llm.requests, 'c', 'public note for all')).toBeGreaterThan(0);
  });

  it('sees everything in the room with PRIVACY=off (the default)', async () => {
    h = await startHarness({ agents: [{ name: 'a' }, { name: 'b' }] });
    h.llm.respond(() => ({ content: '[pass]' }));
    await h.adapter.say('@a psst MARKER-open');
    await h.adapter.say('@b hi');
    await h.bridge.idle();
    expect(sees(h.llm.requests, 'b', 'MARKER-open')).toBeGreaterThan(0);
  });
});

describe('private agent-to-agent chats', () => {
  const chatAgents = [
    { name: 'a', tools: ['chat_request' as const, 'chat_response' as const, 'chat' as const] },
    { name: 'b', tools: ['chat_request' as const, 'chat_response' as const, 'chat' as const] },
    { name: 'c', activation: 'always' as const },
  ];

  it('a chat request gives its mention-only recipient a turn at once; accepted, the pair talks privately', async () => {
    h = await startHarness({ agents: chatAgents });
    const marker = 'MARKER-chat-42';
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'a') {
        if (JSON.stringify(r.messages).includes(marker)) return { content: 'Understood, keeping it quiet.' };
        if (toolResultsOf(r).length > 0) return { content: 'I asked b for a word.' };
        return { toolCalls: [{ name: 'chat_request', arguments: { to: 'b', reason: 'budget details' } }] };
      }
      if (agent === 'b' && situationOf(r).includes('asks you for a private chat (request #1): budget details')) {
        return toolResultsOf(r).length === 0
          ? { toolCalls: [{ name: 'chat_response', arguments: { request_id: 1, accept: true } }] }
          : { content: `the real number is ${marker}` };
      }
      return { content: '[pass]' };
    });
    await h.adapter.say('@a sort it out with b');
    await h.bridge.idle();
    const asked = h.llm.requests.find((r) => agentOf(r) === 'a' && toolResultsOf(r).length > 0);
    expect(asked && toolResultsOf(asked)).toEqual([
      'Chat request #1 sent to @b; they are asked to accept or decline now.',
    ]);
    // b was asked at once (it is mention-only and nobody mentioned it), accepted, and its reply went to a only.
    expect((await h.store.chats.get(1))?.status).toBe('accepted');
    expect(sees(h.llm.requests, 'a', marker)).toBeGreaterThan(0);
    expect(sees(h.llm.requests, 'c', marker)).toBe(0);
    // Nothing private was posted in the room.
    expect(h.adapter.posts.some((p) => p.text.includes(marker))).toBe(false);
    expect(h.adapter.transcript()).toEqual(['[@a]: I asked b for a word.']);
    const status = await h.adapter.command('status');
    expect(status).toMatch(/Private chats: @a \+ @b: 2 messages/);
  });

  it('a declined or expired request shows nothing anywhere, and its sender is told once, at its next turn', async () => {
    h = await startHarness({ agents: chatAgents, env: { CHAT_REQUEST_TIMEOUT_S: '600' } });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      const last = newestOf(r);
      if (agent === 'a' && last.endsWith('@a first')) {
        return { toolCalls: [{ name: 'chat_request', arguments: { to: 'b', reason: 'gossip' } }] };
      }
      if (agent === 'b' && situationOf(r).includes('asks you for a private chat')) {
        return toolResultsOf(r).length === 0
          ? { toolCalls: [{ name: 'chat_response', arguments: { request_id: 2, accept: false } }] }
          : { content: 'MARKER-declined no thanks' };
      }
      return { content: '[pass]' };
    });
    const old = await h.store.chats.create('a', 'c', 'stale', Date.now() - 5000, 1000);
    await h.adapter.say('@a first');
    await h.bridge.idle();
    expect((await h.store.chats.get(2))?.status).toBe('declined');
    expect(JSON.stringify(h.adapter.posts)).not.toContain('MARKER-declined');
    expect(await history(h.store, 'private', 'a+b', 10)).toEqual([]);
    await h.adapter.say('@a again');
    await h.adapter.say('@a and again');
    await h.bridge.idle();
    const told = (r: RecordedRequest) =>
      agentOf(r) === 'a' && /Your chat request #2 to @b was declined/.test(situationOf(r));
    const expired = (r: RecordedRequest) =>
      agentOf(r) === 'a' && new RegExp(`Your chat request #${old.id} to @c expired unanswered`).test(situationOf(r));
    // Counted per turn (a turn's first call: a tool round repeats the same context).
    const turns = h.llm.requests.filter((r) => toolResultsOf(r).length === 0);
    expect(turns.filter(told)).toHaveLength(1);
    expect(turns.filter(expired)).toHaveLength(1);
  });

  it('look lists who is at the table and the pending requests', async () => {
    h = await startHarness({
      agents: [
        { name: 'a', tools: ['look'] },
        { name: 'b', activation: 'always' },
      ],
    });
    await h.store.chats.create('b', 'a', 'a quick word', Date.now(), 60_000);
    h.llm.script('a', { toolCalls: [{ name: 'look', arguments: {} }] }, { content: 'done' });
    await h.adapter.say('hello all', { user: 'ann' });
    await h.adapter.say('@a who is here?', { user: 'bo' });
    await h.bridge.idle();
    const result = toolResultsOf(h.llm.requests.find((r) => agentOf(r) === 'a' && toolResultsOf(r).length > 0))[0];
    expect(result).toContain('Agents at the table: @b (always).');
    expect(result).toMatch(/Humans recently active here: (@ann, @bo|@bo, @ann)\./);
    expect(result).toContain('Pending chat requests: #1 from @b (a quick word).');
  });

  it('answers bad requests with clear errors: unknown agent, bad id, one pending per pair, three per turn', async () => {
    h = await startHarness({
      agents: [...chatAgents, { name: 'd' }, { name: 'e' }, { name: 'f' }],
    });
    h.llm.script(
      'a',
      {
        toolCalls: [
          { name: 'chat_request', arguments: { to: 'zed', reason: 'x' } },
          { name: 'chat_response', arguments: { request_id: 99, accept: true } },
          { name: 'chat', arguments: { to: 'b', message: 'hi' } },
          { name: 'chat_request', arguments: { to: 'b', reason: 'one' } },
          { name: 'chat_request', arguments: { to: 'b', reason: 'again' } },
          { name: 'chat_request', arguments: { to: 'd', reason: 'x' } },
          { name: 'chat_request', arguments: { to: 'e', reason: 'x' } },
        ],
      },
      { content: 'done' },
    );
    await h.adapter.say('@a go');
    await h.bridge.idle();
    expect(toolResultsOf(h.llm.requests.find((r) => agentOf(r) === 'a' && toolResultsOf(r).length > 0))).toEqual([
      '[ERROR: there is no agent named @zed]',
      '[ERROR: there is no chat request #99 addressed to you]',
      '[ERROR: you have no accepted chat with @b: send chat_request first]',
      'Chat request #1 sent to @b; they are asked to accept or decline now.',
      '[ERROR: request #1 between you and @b is already pending]',
      'Chat request #2 sent to @d; they are asked to accept or decline now.',
      '[ERROR: at most 3 new chat requests per turn]',
    ]);
  });
});

describe('per-room privacy, the private chat log and prompt frames', () => {
  it('applies mentions privacy only in the rooms listed in PRIVACY_ROOMS', async () => {
    h = await startHarness({
      agents: [{ name: 'a' }, { name: 'b' }],
      env: { PRIVACY_ROOMS: 'test:secret' },
    });
    h.llm.respond(() => ({ content: '[pass]' }));
    await h.adapter.say('@a MARKER-secret-room', { channel: 'secret' });
    await h.adapter.say('@b hi', { channel: 'secret' });
    await h.adapter.say('@a MARKER-open-room', { channel: 'open' });
    await h.adapter.say('@b hi', { channel: 'open' });
    await h.bridge.idle();
    expect(sees(h.llm.requests, 'b', 'MARKER-secret-room')).toBe(0);
    expect(sees(h.llm.requests, 'b', 'MARKER-open-room')).toBeGreaterThan(0);
  });

  it("mirrors private chats into PRIVATE_CHAT_LOG for operators, outside that room's history", async () => {
    h = await startHarness({
      agents: [
        { name: 'a', tools: ['chat_request', 'chat_response', 'chat'] },
        { name: 'b', tools: ['chat_request', 'chat_response', 'chat'] },
        { name: 'c', activation: 'always' },
      ],
      env: { PRIVATE_CHAT_LOG: 'test:ops' },
    });
    h.llm.respond(() => ({ content: '[pass]' }));
    const chats = h.store.chats;
    const request = await chats.create('a', 'b', 'numbers', Date.now(), 60_000);
    await chats.setStatus(request.id, 'accepted');
    h.llm.script('a', { toolCalls: [{ name: 'chat', arguments: { to: 'b', message: 'MARKER-log psst' } }] });
    await h.adapter.say('@a tell b');
    await h.bridge.idle();
    expect(h.adapter.transcript('ops')).toEqual(['[system]: [private chat a <-> b] @a: MARKER-log psst']);
    const ops = await h.store.rooms.open('test', 'ops');
    expect(await h.store.rooms.history(ops.id, 10)).toEqual([]);
    await h.adapter.say('anyone here?', { channel: 'ops' });
    await h.bridge.idle();
    expect(sees(h.llm.requests, 'c', 'MARKER-log')).toBe(0);
  });

  it("uses an agent's own prompt frames when its file overrides them", async () => {
    h = await startHarness({
      agents: [
        { name: 'a', activation: 'always', prompts: { observe: 'OBSERVE-FRAME', requested: 'ASKED BY {requester}' } },
      ],
    });
    h.llm.respond(() => ({ content: '[pass]' }));
    await h.adapter.say('just talking');
    await h.adapter.say('@a your turn');
    await h.bridge.idle();
    const systems = h.llm.requests.map(situationOf);
    expect(systems[0]).toContain('OBSERVE-FRAME');
    expect(systems[1]).toContain('ASKED BY @user');
  });
});

describe('chat request expiry', () => {
  it('refuses to accept a request that has expired, and allows a new one for the pair', async () => {
    h = await startHarness({
      agents: [
        { name: 'a', tools: ['chat_request', 'chat_response', 'chat'] },
        { name: 'b', tools: ['chat_request', 'chat_response', 'chat'] },
      ],
      env: { CHAT_REQUEST_TIMEOUT_S: '1' },
    });
    const old = await h.store.chats.create('a', 'b', 'too late', Date.now() - 5000, 1000);
    h.llm.script(
      'b',
      {
        toolCalls: [
          { name: 'chat_response', arguments: { request_id: old.id, accept: true } },
          { name: 'chat_request', arguments: { to: 'a', reason: 'let us talk now' } },
        ],
      },
      { content: 'ok' },
    );
    await h.adapter.say('@b go');
    await h.bridge.idle();
    const tools = toolResultsOf(h.llm.requests.find((r) => agentOf(r) === 'b' && toolResultsOf(r).length > 0));
    expect(tools).toEqual([
      `[ERROR: chat request #${old.id} is expired]`,
      'Chat request #2 sent to @a; they are asked to accept or decline now.',
    ]);
    expect((await h.store.chats.get(2))?.expiresAt).toBeLessThanOrEqual(Date.now() + 1000);
  });
});
