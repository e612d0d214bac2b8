import { describe, expect, it } from 'vitest';
import {
  classifyReply,
  countMessage,
  handBack,
  handBackText,
  limitReached,
  worldPassText,
} from '../../src/room/turns.js';
import type { TurnState } from '../../src/room/types.js';

describe('classifyReply', () => {
  it('treats exactly [pass] (trimmed, any case) and an empty reply as a pass', () => {
    expect(classifyReply('  [pass] \n')).toEqual({ kind: 'pass' });
    expect(classifyReply('[PASS]')).toEqual({ kind: 'pass' });
    expect(classifyReply('')).toEqual({ kind: 'pass' });
  });

  it('posts a reply that merely contains [pass]', () => {
    expect(classifyReply('I would [pass] on that')).toEqual({
      kind: 'message',
      text: 'I would [pass] on that',
    });
  });

  it('keeps the reply without the <world>pass</world> tag (a refinement of seed 003)', () => {
    expect(classifyReply('Revenue is up 4%. <world>pass</world>')).toEqual({
      kind: 'world-pass',
      text: 'Revenue is up 4%.',
    });
    expect(classifyReply('<world> PASS </world>')).toEqual({ kind: 'world-pass', text: '' });
    expect(classifyReply('[pass] <world>pass</world>')).toEqual({ kind: 'world-pass', text: '' });
    expect(worldPassText('code')).toBe('@human code is passing control to you');
  });

  it('ignores <world>pass</world> quoted in code', () => {
    expect(classifyReply('Write `<world>pass</world>` to stop.').kind).toBe('message');
  });
});

describe('turn counter', () => {
  const start: TurnState = { consecutive: 0, control: 'agents' };

  it("counts agent messages, resets on a human message, and is not reset by the bridge's own lines", () => {
    let state = start;
    for (let i = 0; i < 3; i++) state = countMessage(state, 'agent');
    expect(state.consecutive).toBe(3);
    expect(countMessage(state, 'human')).toEqual({ consecutive: 0, control: 'agents' });
    // An error line after a failing agent must not keep a loop alive past the limit.
    expect(countMessage(state, 'system').consecutive).toBe(3);
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
