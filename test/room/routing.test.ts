import { describe, expect, it } from 'vitest';
import { planWakes, requestsOf } from '../../src/room/routing.js';
import type { AgentProfile } from '../../src/room/types.js';
import type { WakeInput } from '../../src/room/wake.js';

const agents: AgentProfile[] = [
  { name: 'data', activation: 'always' },
  { name: 'code', activation: 'mention' },
  { name: 'alpha', activation: 'mention' },
  { name: 'beta', activation: 'mention' },
  { name: 'reviewer', activation: 'always' },
];
const msg = (
  author: string,
  mentions: string[] = [],
  kind: WakeInput['kind'] = 'agent',
  extra: Partial<WakeInput> = {},
): WakeInput => ({ author, kind, mentions, ...extra });
const plan = (message: WakeInput, history: WakeInput[] = [], options = {}) =>
  planWakes(agents, message, history, options).map((w) => `${w.agent}:${w.reason}`);

describe('planWakes', () => {
  it('asks every agent a human names, in the order named, before the always agents', () => {
    expect(plan(msg('user', ['beta', 'alpha'], 'human'))).toEqual([
      'beta:addressed',
      'alpha:addressed',
      'data:always',
      'reviewer:always',
    ]);
  });

  it('puts an addressed mention-only agent before an always agent configured first', () => {
    expect(plan(msg('user', ['code'], 'human'))).toEqual(['code:addressed', 'data:always', 'reviewer:always']);
  });

  it('wakes first the agent whose last message asked this speaker, human or agent', () => {
    const history = [msg('user', ['code'], 'human'), msg('code', ['user'], 'agent', { requests: ['user'] })];
    expect(plan(msg('user', [], 'human'), history)).toEqual(['code:awaiting', 'data:always', 'reviewer:always']);
  });

  it('does not treat a mention that answered the speaker as waiting for them', () => {
    const history = [msg('user', ['code'], 'human'), msg('code', [], 'agent', { requests: [] })];
    expect(plan(msg('user', [], 'human'), history)).toEqual(['data:always', 'reviewer:always']);
  });

  it('never wakes the author, nor an excluded agent, nor anyone on a system message', () => {
    expect(plan(msg('data', ['code']))).toEqual(['code:mentioned', 'reviewer:always']);
    expect(plan(msg('user', ['code'], 'human'), [], { exclude: ['CODE'] })).toEqual(['data:always', 'reviewer:always']);
    expect(plan(msg('system', ['code'], 'system'))).toEqual([]);
  });

  it('wakes only the DM owner in a DM', () => {
    expect(plan(msg('user', ['data'], 'human'), [], { directAgent: 'code' })).toEqual(['code:direct']);
  });

  it('never wakes an agent that cannot see the message (privacy)', () => {
    const secret = msg('user', ['code'], 'human', { audience: ['user', 'code'] });
    expect(plan(secret)).toEqual(['code:addressed']);
  });
});

describe('requestsOf', () => {
  it('drops the author and the people being answered; keeps everyone else, humans included', () => {
    expect(requestsOf({ agents: ['pm', 'expert', 'code'], author: 'code', answering: ['PM'] })).toEqual(['expert']);
    expect(requestsOf({ agents: [], humans: ['user'], author: 'code', answering: [] })).toEqual(['user']);
    expect(
      requestsOf({ agents: [], humans: ['user'], author: 'code', answering: ['user'], text: '@user 42 rows.' }),
    ).toEqual([]);
  });

  it('asks a human it answers when the answer asks a question (outside code); an agent it answers, never', () => {
    const question = '@user which file should I read? @pm which one?';
    expect(
      requestsOf({ agents: ['pm'], humans: ['user'], author: 'code', answering: ['user', 'pm'], text: question }),
    ).toEqual(['user']);
    expect(
      requestsOf({ agents: [], humans: ['user'], author: 'code', answering: ['user'], text: '@user see `a?b`' }),
    ).toEqual([]);
  });
});
