/** Rule 15: a turn a spending limit stopped posts nothing, tells the room once, and keeps nobody waiting. */
import { describe, expect, it } from 'vitest';
import type { RoomInput as Incoming } from '../../src/bridge/loop/room-handle.js';
import { decide } from '../../src/room/decide.js';
import type { Effect, Write } from '../../src/room/effects.js';
import type { RoomEvent, SpendLimitReached } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';

const setup: RoomSetup = {
  key: 'test:room',
  agents: [
    { name: 'pm', activation: 'mention' },
    { name: 'data', activation: 'mention' },
  ],
  turnLimit: 20,
  kind: 'room',
  privacy: 'off',
  requestTimeoutMs: 600_000,
  editWindowMs: 120_000,
  maxToolRounds: 8,
  batching: false,
};

const limit: SpendLimitReached = {
  scope: 'agent',
  agent: 'data',
  amount: '$2.00',
  until: '2026-11-27 00:00 UTC',
  key: 'agent:data:2026-11-26:2000000000',
};

/** Plays events through decide, as the shell would: each from the state the last one left. */
function play(events: Array<Incoming | ((state: RoomState) => Incoming)>) {
  let state = EMPTY_STATE;
  const effects: Effect[] = [];
  const writes: Write[] = [];
  let now = 1000;
  for (const next of events) {
    const event = { ...(typeof next === 'function' ? next(state) : next), now: now++ } as RoomEvent;
    const decision = decide(setup, state, event, { nextRequestId: 1 });
    state = decision.state;
    effects.push(...decision.effects);
    writes.push(...decision.writes);
    // The platform takes every post at once, as the shell reports it.
    for (let post = state.posts[0]; post; post = state.posts[0]) {
      const posted = decide(
        setup,
        state,
        { type: 'posted', post: post.id, platformIds: [`p${post.id}`], now: now++ },
        { nextRequestId: 1 },
      );
      state = posted.state;
      effects.push(...posted.effects);
      writes.push(...posted.writes);
    }
  }
  return { state, effects, writes };
}

const human = (text: string, at: number): Incoming => ({
  type: 'message',
  message: { author: 'alice', authorId: 'u1', kind: 'human', text, platformIds: [`m${at}`], at },
});
const answerCurrent =
  (outcome: Extract<RoomEvent, { type: 'answer' }>['outcome']) =>
  (state: RoomState): Incoming => ({ type: 'answer', ask: state.current?.ask.id ?? -1, outcome });
const lines = (writes: Write[]) =>
  writes.flatMap((w) => (w.type === 'message' && w.message.kind === 'system' ? [w.message.text] : []));
const postedLine = (effects: Effect[]) =>
  effects.flatMap((e) => (e.type === 'post' && e.post.agent === null ? [e.post.text] : []));

describe('a turn stopped by a spending limit', () => {
  it('posts nothing and tells the room once per limit, naming who, which limit, until when and how to raise it', () => {
    const { state, effects } = play([
      human('@data how many rows?', 1),
      answerCurrent({ kind: 'over-limit', limit }),
      human('@data and now?', 2),
      answerCurrent({ kind: 'over-limit', limit }),
    ]);
    expect(postedLine(effects)).toEqual([
      '@data has reached its spending limit ($2.00 a day) and stays silent until 2026-11-27 00:00 UTC. An operator can raise it with /budget agent data <dollars>.',
    ]);
    expect(effects.filter((e) => e.type === 'post' && e.post.agent !== null)).toEqual([]);
    expect(state.current).toBeNull();
    // A raised limit reached again (another key) is told again.
    const again = play([
      human('@data how many rows?', 1),
      answerCurrent({ kind: 'over-limit', limit }),
      human('@data and now?', 2),
      answerCurrent({
        kind: 'over-limit',
        limit: { ...limit, amount: '$5.00', key: 'agent:data:2026-11-26:5000000000' },
      }),
    ]);
    expect(postedLine(again.effects)).toHaveLength(2);
  });

  it('settles a request at once for that agent, so its requester resumes without waiting for the deadline', () => {
    const { effects, writes } = play([
      human('@pm ask data for the total', 1),
      answerCurrent({ kind: 'reply', text: '@data what is the total?' }),
      answerCurrent({ kind: 'over-limit', limit }),
    ]);
    const request = writes.filter((w) => w.type === 'request').at(-1);
    expect(request?.type === 'request' && request.request.answers).toEqual([
      expect.objectContaining({ participant: 'data', outcome: 'failed', text: 'over its spending limit' }),
    ]);
    const resumed = effects.filter((e) => e.type === 'ask').at(-1);
    expect(resumed?.type === 'ask' && resumed.turns.map((t) => [t.ask.agent, t.ask.reason])).toEqual([
      ['pm', 'resume'],
    ]);
    expect(lines(writes).some((line) => line.startsWith('@data has reached its spending limit'))).toBe(true);
  });
});
