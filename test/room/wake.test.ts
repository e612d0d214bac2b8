import { describe, expect, it } from 'vitest';
import type { AgentProfile } from '../../src/room/types.js';
import { isAwaiting, shouldWake, type WakeInput } from '../../src/room/wake.js';

const code: AgentProfile = { name: 'code', activation: 'mention' };
const reviewer: AgentProfile = { name: 'reviewer', activation: 'always' };
const msg = (author: string, mentions: string[] = [], kind: WakeInput['kind'] = 'agent'): WakeInput => ({
  author,
  kind,
  mentions,
});

describe('shouldWake', () => {
  it('never wakes an agent on its own message', () => {
    expect(shouldWake(reviewer, msg('reviewer'), [])).toBe(false);
    expect(shouldWake(code, msg('code', ['code']), [])).toBe(false);
  });

  it('wakes a mention agent only when mentioned', () => {
    expect(shouldWake(code, msg('user', [], 'human'), [])).toBe(false);
    expect(shouldWake(code, msg('user', ['code'], 'human'), [])).toBe(true);
  });

  it('wakes an always agent on any message from someone else', () => {
    expect(shouldWake(reviewer, msg('user', [], 'human'), [])).toBe(true);
    expect(shouldWake(reviewer, msg('data'), [])).toBe(true);
  });

  it('wakes an agent whose last message mentioned the speaker (it awaits that reply)', () => {
    const history = [msg('user', ['code'], 'human'), msg('code', ['data'])];
    expect(shouldWake(code, msg('data'), history)).toBe(true);
  });

  it('stops awaiting once the speaker has answered', () => {
    const history = [msg('code', ['data']), msg('data'), msg('user', [], 'human')];
    expect(isAwaiting(code, msg('data'), history)).toBe(false);
    expect(shouldWake(code, msg('data'), history)).toBe(false);
  });

  it("looks only at the agent's own last message", () => {
    const history = [msg('code', ['data']), msg('code', [])];
    expect(shouldWake(code, msg('data'), history)).toBe(false);
  });

  it("never wakes anyone on the bridge's own messages", () => {
    expect(shouldWake(reviewer, msg('system', ['reviewer'], 'system'), [])).toBe(false);
  });

  it("wakes only the DM's agent in a private room, always", () => {
    expect(shouldWake(code, msg('user', [], 'human'), [], { directAgent: 'code' })).toBe(true);
    expect(shouldWake(reviewer, msg('user', [], 'human'), [], { directAgent: 'code' })).toBe(false);
  });

  it("does not confuse a human who shares an agent's name with the agent", () => {
    expect(shouldWake(code, msg('code', ['code'], 'human'), [])).toBe(true);
  });
});
