import { afterEach, describe, expect, it } from 'vitest';
import { agentOf, type Harness, startHarness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

let h: Harness;
afterEach(async () => h?.close());

const agents = [
  { name: 'code', activation: 'mention' as const, price: { input: 2, cached: 1, output: 8 } },
  { name: 'data', activation: 'mention' as const },
];

describe('why, as the room decides it', () => {
  it('stores who was woken and why, who passed and who failed, by the message they are about', async () => {
    h = await startHarness({ agents });
    h.llm.respond((request) =>
      agentOf(request) === 'code' ? { content: '[pass]' } : { status: 500, errorMessage: 'model down' },
    );
    await h.adapter.say('@code @data what now?');
    await h.bridge.idle();
    const reasons = await h.bridge.sink.decisions?.('test:room', 1, 1);
    expect(reasons?.map((r) => r.record)).toEqual([
      { kind: 'routed', seq: 1, author: 'user', woken: ['code:addressed', 'data:addressed'] },
      { kind: 'passed', agent: 'code', about: 1 },
      { kind: 'failed', agent: 'data', reason: expect.stringContaining('model down'), about: 1 },
    ]);
    // The failure's line is a message of its own; the bridge's lines are never routed.
    expect(await h.bridge.sink.decisions?.('test:room', 2, 2)).toEqual([]);
    expect(await h.bridge.sink.decisions?.('test:nowhere', 0, 10)).toEqual([]);
  });

  it('records a hand-back with its reason: /pass stops the turn being written', async () => {
    h = await startHarness({ agents });
    h.llm.respond(() => ({ hang: true }));
    await h.adapter.say('@code take your time');
    await until(() => h.llm.requests.length === 1);
    await h.adapter.command('pass');
    await h.bridge.idle();
    const reasons = (await h.bridge.sink.decisions?.('test:room', 0, 10))?.map((r) => r.record.kind);
    expect(reasons).toEqual(['routed', 'hand-back']);
    const handBack = (await h.bridge.sink.decisions?.('test:room', 1, 1))?.[1]?.record;
    expect(handBack).toEqual({ kind: 'hand-back', reason: '/pass' });
  });
});

describe("the operator console's view", () => {
  it("shows every room's control state, the open requests as trees, and each agent's usage and cost", async () => {
    h = await startHarness({ agents, env: { TURN_LIMIT: '7' } });
    h.llm.respond(() => ({ content: 'on it' }));
    await h.adapter.say('@code start', { channel: 'a' });
    await h.bridge.idle();
    await h.adapter.command('privacy', 'mentions', { channel: 'b' });
    await h.adapter.command('pass', '', { channel: 'b' });
    const view = await h.bridge.sink.overview?.();
    expect(view?.rooms.map((r) => [r.key, r.control, r.privacy])).toEqual([
      ['test:a', { holder: 'agents', count: 1, limit: 7 }, 'off'],
      ['test:b', { holder: 'humans', count: 0, limit: 7, reason: '/pass' }, 'mentions'],
    ]);
    expect(view?.rooms[0]).toMatchObject({ working: [], queued: [], seq: 2, sandbox: expect.any(String) });
    expect(view?.requests).toEqual([]);
    const code = view?.agents.find((a) => a.agent === 'code');
    expect(code).toMatchObject({ calls: 1, activation: 'mention' });
    expect(code?.input).toBeGreaterThan(0);
    expect(code?.cost).toBeCloseTo(((code?.input ?? 0) * 2 + (code?.output ?? 0) * 8) / 1_000_000, 10);
    const data = view?.agents.find((a) => a.agent === 'data');
    expect(data).toMatchObject({ calls: 0, input: 0 });
    expect(data?.cost).toBeUndefined();
    // Today's spend against the limits: counted for an agent with a price, not for one without.
    expect(code?.spend).toMatchObject({ held: 0, limit: null });
    expect(code?.spend?.spent).toBeCloseTo(code?.cost ?? -1, 6);
    expect(data?.spend).toBeUndefined();
    expect(view?.spend).toMatchObject({ limit: null });
    expect(view?.spend?.spent).toBeCloseTo(code?.cost ?? -1, 6);
  });

  it("pages a room's stored messages for a transcript, with the platform's ids", async () => {
    h = await startHarness({ agents });
    h.llm.respond(() => ({ content: 'hello back' }));
    for (let i = 1; i <= 3; i++) await h.adapter.say(`message ${i}`, { id: `m${i}` });
    await h.adapter.say('@code hi', { id: 'm4' });
    await h.bridge.idle();
    const newest = (await h.bridge.sink.transcript?.('test:room', { limit: 2 })) ?? [];
    expect(newest.map((m) => [m.id, m.author, m.kind, m.text])).toEqual([
      ['m4', 'user', 'human', '@code hi'],
      [h.adapter.posts[0]?.id, 'code', 'agent', 'hello back'],
    ]);
    const older = (await h.bridge.sink.transcript?.('test:room', { before: newest[0]?.cursor, limit: 10 })) ?? [];
    expect(older.map((m) => m.text)).toEqual(['message 1', 'message 2', 'message 3']);
    expect(await h.bridge.sink.transcript?.('test:unknown', { limit: 10 })).toEqual([]);
  });
});

describe('open requests in the console', () => {
  it('hangs a request made while answering another below it, with its deadline and who answered', async () => {
    const { requestTrees } = await import('../../src/bridge/views/overview.js');
    const row = (id: number, parent: number | null, status: 'open' | 'closed' = 'open') => ({
      id,
      requester: 'code',
      origin: 'test:a',
      target: 'test:a',
      parent,
      text: `request ${id}`,
      awaited: [
        { name: 'data', kind: 'agent' as const },
        { name: 'ana', kind: 'human' as const },
      ],
      answers: [{ participant: 'DATA', text: 'x', outcome: 'pass' as const, at: 5 }],
      status,
      openedAt: 1,
      deadline: 600_001,
      opener: { people: [], audience: null },
    });
    const trees = requestTrees([row(1, null), row(2, 1), row(3, 2), row(4, null, 'closed'), row(5, 4)]);
    expect(trees.map((t) => t.id)).toEqual([1, 5]);
    expect(trees[0]?.children[0]?.children[0]?.id).toBe(3);
    expect(trees[0]?.awaited).toEqual([
      { name: 'data', kind: 'agent', outcome: 'pass' },
      { name: 'ana', kind: 'human' },
    ]);
    expect(trees[0]?.deadline).toBe(600_001);
  });
});
