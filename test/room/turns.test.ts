import { describe, expect, it } from 'vitest';
import {
  classifyReply,
  countMessage,
  handBack,
  handBackText,
  limitReached,
  nextCandidates,
  worldPassText,
} from '../../src/room/turns.js';
import type { AgentProfile, TurnState } from '../../src/room/types.js';
import type { WakeInput } from '../../src/room/wake.js';

const agents: AgentProfile[] = [
  { name: 'code', activation: 'mention' },
  { name: 'data', activation: 'always' },
  { name: 'reviewer', activation: 'always' },
];
const msg = (author: string, mentions: string[] = [], kind: WakeInput['kind'] = 'agent'): WakeInput => ({
  author,
  kind,
  mentions,
});

describe('classifyReply', () => {
  it('treats exactly [pass] (trimmed, any case) and an empty reply as a pass', () => {
    expect(classifyReply('code', '  [pass] \n')).toEqual({ kind: 'pass' });
    expect(classifyReply('code', '[PASS]')).toEqual({ kind: 'pass' });
    expect(classifyReply('code', '')).toEqual({ kind: 'pass' });
  });

  it('posts a reply that merely contains [pass]', () => {
    expect(classifyReply('code', 'I would [pass] on that')).toEqual({
      kind: 'message',
      text: 'I would [pass] on that',
    });
  });

  it('replaces a reply containing <world>pass</world> with the hand-back line', () => {
    expect(classifyReply('data', 'All done. <world>pass</world>')).toEqual({
      kind: 'world-pass',
      text: '@human data is passing control to you',
    });
    expect(worldPassText('code')).toBe('@human code is passing control to you');
  });

  it('ignores <world>pass</world> quoted in code', () => {
    expect(classifyReply('data', 'Write `<world>pass</world>` to stop.').kind).toBe('message');
  });
});

describe('nextCandidates', () => {
  it('asks the agents whose shouldWake holds, in configured order', () => {
    expect(nextCandidates(agents, msg('user', ['code'], 'human'), []).map((a) => a.name)).toEqual([
      'code',
      'data',
      'reviewer',
    ]);
    expect(nextCandidates(agents, msg('user', [], 'human'), []).map((a) => a.name)).toEqual(['data', 'reviewer']);
  });

  it('puts the agent that requested this reply first', () => {
    const history = [msg('user', [], 'human'), msg('reviewer', ['code'])];
    expect(nextCandidates(agents, msg('code'), history).map((a) => a.name)).toEqual(['reviewer', 'data']);
  });

  it("returns nobody after a system message (the humans' turn)", () => {
    expect(nextCandidates(agents, msg('system', [], 'system'), [])).toEqual([]);
  });
});

describe('turn counter', () => {
  const start: TurnState = { consecutive: 0, control: 'agents' };

  it('counts agent messages and resets on human and system messages', () => {
    let state = start;
    for (let i = 0; i < 3; i++) state = countMessage(state, 'agent');
    expect(state.consecutive).toBe(3);
    expect(countMessage(state, 'human')).toEqual({ consecutive: 0, control: 'agents' });
    expect(countMessage(state, 'system').consecutive).toBe(0);
  });

  it('gives control back to the agents when a human speaks after a hand-back', () => {
    expect(countMessage(handBack('turn limit'), 'human').control).toBe('agents');
  });

  it('reaches the limit at exactly TURN_LIMIT consecutive agent messages', () => {
    let state = start;
    for (let i = 0; i < 19; i++) state = countMessage(state, 'agent');
    expect(limitReached(state, 20)).toBe(false);
    expect(limitReached(countMessage(state, 'agent'), 20)).toBe(true);
  });

  it('hands control to the humans with a reason and says why', () => {
    expect(handBack('turn limit')).toEqual({ consecutive: 0, control: 'humans', reason: 'turn limit' });
    expect(handBackText(20)).toMatch(/20 agent messages in a row.*control is back with you/);
  });
});
