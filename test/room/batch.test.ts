/** Rule 14: a batched call's answers, as the room takes them (a pass is its own kind of answer, not a text). */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { Decision, Effect } from '../../src/room/effects.js';
import type { BatchAnswer, RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';

const setup: RoomSetup = {
  key: 'test:room',
  agents: [
    { name: 'ada', activation: 'always', batchGroup: 'g' },
    { name: 'bo', activation: 'always', batchGroup: 'g' },
  ],
  turnLimit: 20,
  kind: 'room',
  privacy: 'off',
  requestTimeoutMs: 600_000,
  editWindowMs: 120_000,
  maxToolRounds: 8,
  batching: true,
};

function step(state: RoomState, event: RoomEvent): Decision {
  return decide(setup, state, event, { nextRequestId: 1 });
}

/** A human speaks; both observers are asked in one batched call; each answers. */
function answered(answers: Record<string, BatchAnswer>): { state: RoomState; effects: Effect[] } {
  const said = step(EMPTY_STATE, {
    type: 'message',
    now: 1,
    message: { author: 'alice', authorId: 'u1', kind: 'human', text: 'the build is red', platformIds: ['m1'], at: 1 },
  });
  const asked = said.effects.find((e): e is Extract<Effect, { type: 'ask' }> => e.type === 'ask');
  expect(asked?.turns.map((t) => t.ask.agent)).toEqual(['ada', 'bo']);
  const decision = step(said.state, {
    type: 'batch',
    now: 2,
    answers: (asked?.turns ?? []).map((t) => ({ ask: t.ask.id, answer: answers[t.ask.agent] ?? { kind: 'alone' } })),
  });
  return { state: decision.state, effects: [...decision.effects] };
}

describe('a batched call answered', () => {
  it('takes a pass as a pass: nothing posted, nobody asked again, the pass recorded', () => {
    const { state, effects } = answered({ ada: { kind: 'pass' }, bo: { kind: 'pass' } });
    expect(effects.filter((e) => e.type === 'ask' || e.type === 'post')).toEqual([]);
    expect(
      effects.flatMap((e) =>
        e.type === 'record' ? [`${e.record.kind} ${'agent' in e.record ? e.record.agent : ''}`] : [],
      ),
    ).toEqual(['passed ada', 'passed bo']);
    expect(state.batch).toBeNull();
    expect(state.current).toBeNull();
  });

  it('asks an observer that must answer alone on its own', () => {
    const { effects } = answered({ ada: { kind: 'alone' }, bo: { kind: 'pass' } });
    const asked = effects.flatMap((e) => (e.type === 'ask' ? e.turns.map((t) => t.ask.agent) : []));
    expect(asked).toEqual(['ada']);
  });
});
