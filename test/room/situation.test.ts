/**
 * Why a turn is asked: the frame of its prompt is decided by the room (a turn order carries it); the shell only
 * renders it. Replayed through the script language, as decide.test.ts does.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { Effect } from '../../src/room/effects.js';
import { EMPTY_STATE, type RoomSetup } from '../../src/room/state.js';
import { MachineSystem } from '../model/machine.js';
import { dmRoom, MAIN, type Observed, type Oracle, type Step, type World } from '../model/script.js';
import { roomSetup } from './room-setup.js';

const world: World = {
  agents: [
    { name: 'pm', activation: 'mention', actions: false },
    { name: 'data', activation: 'mention', actions: false },
    { name: 'critic', activation: 'always', actions: false },
  ],
  humans: ['alice', 'bob'],
  turnLimit: 20,
  privacy: 'off',
  timeoutMs: 600_000,
  editWindowMs: 120_000,
  maxToolRounds: 8,
};
const text = (t: string) => ({ kind: 'text' as const, text: t });
const say = (t: string, human = 'alice', room = MAIN): Step => ({ kind: 'say', room, human, text: t });
const deliver = (room = MAIN): Step => ({ kind: 'deliver', room });
const frames = (observed: Observed[]) => observed.flatMap((o) => (o.kind === 'ask' ? [`${o.agent}: ${o.frame}`] : []));

describe('the frame of a turn', () => {
  it('tells an agent a human named that the human asked for its action, and an always agent that it observes', () => {
    const m = new MachineSystem(world, { pm: [text('on it')], critic: [text('[pass]')] });
    const seen = [...m.step(say('@pm plan the release')), ...m.step(deliver()), ...m.step(deliver())];
    expect(frames(seen)).toEqual(['pm: requested by alice', 'critic: observe']);
  });

  it('names every human whose questions one turn answers', () => {
    const m = new MachineSystem(world, { pm: [text('one'), text('both of you')], critic: [] });
    const seen = [
      ...m.step(say('@pm plan the release')),
      ...m.step(say('@pm and the date?', 'bob')),
      ...m.step(say('@pm and the notes?', 'alice')),
      ...m.step(deliver()),
      ...m.step(deliver()),
    ];
    expect(frames(seen)).toEqual(['pm: requested by alice', 'pm: requested by bob,alice', 'critic: observe']);
  });

  it('tells an agent that waited for a human that the human answered', () => {
    const oracle: Oracle = { pm: [text('@alice which release?'), text('thanks')], critic: [] };
    const m = new MachineSystem(world, oracle);
    const seen = [
      ...m.step(say('@pm plan the release')),
      ...m.step(deliver()),
      ...m.step(deliver()),
      ...m.step(say('the spring one')),
    ];
    expect(frames(seen)).toEqual(['pm: requested by alice', 'critic: observe', 'pm: answered by alice']);
  });

  it('speaks to the human of a DM', () => {
    const m = new MachineSystem(world, { data: [text('42')] });
    expect(frames(m.step(say('how many rows?', 'bob', dmRoom('data', 'bob'))))).toEqual(['data: direct with bob']);
  });

  it('resumes a requester with its answers, and asks the awaited agent for the requester', () => {
    const oracle: Oracle = { pm: [text('@data what is the total?'), text('the total is 42')], data: [text('42')] };
    const m = new MachineSystem(world, oracle);
    const seen = [
      ...m.step(say('@pm ask data for the total')),
      ...m.step(deliver()),
      ...m.step(deliver()),
      ...m.step(deliver()),
    ];
    expect(frames(seen).filter((f) => !f.startsWith('critic'))).toEqual([
      'pm: requested by alice',
      'data: requested by pm',
      'pm: resume',
    ]);
  });

  it('is carried by the ask effect, with the summary a resume reads', () => {
    const setup: RoomSetup = roomSetup();
    const message = { author: 'alice', authorId: 'u1', kind: 'human' as const, platformIds: ['m1'], at: 1 };
    const decision = decide(
      setup,
      EMPTY_STATE,
      { type: 'message', now: 1, message: { ...message, text: '@pm plan it' } },
      { nextRequestId: 1 },
    );
    const ask = decision.effects.find((e): e is Extract<Effect, { type: 'ask' }> => e.type === 'ask');
    expect(ask?.turns.map((t) => t.situation)).toEqual([{ kind: 'requested', requesters: ['alice'], threads: [] }]);
  });
});
