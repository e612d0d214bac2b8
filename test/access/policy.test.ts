/** The access policy read against what the platform says of an author and a room (src/access/policy.ts). */
import { describe, expect, it } from 'vitest';
import { type AccessPolicy, OPEN_RULE, refusal, wakeable } from '../../src/access/policy.js';
import { agentRule, globalRule } from '../../src/config/access.js';
import { readSettings } from '../../src/config/index.js';

const asker = { platform: 'discord', userId: '111', channel: '900', channelName: 'dev' };

describe('the access policy', () => {
  it('lets everyone in when no user or role is listed, and names the channel rule', () => {
    expect(refusal(OPEN_RULE, asker)).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, channels: ['#Dev'] }, asker)).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, channels: ['#general'] }, asker)).toBe('channel');
    expect(refusal({ ...OPEN_RULE, channels: ['900'] }, asker)).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, channels: ['slack:900'] }, asker)).toBe('channel');
    expect(refusal({ ...OPEN_RULE, channels: ['discord:#dev'] }, asker)).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, channels: ['slack:#dev'] }, asker)).toBe('channel');
  });

  it('reads user ids bare or with their platform, and roles', () => {
    expect(refusal({ ...OPEN_RULE, users: ['111'] }, asker)).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, users: ['discord:111'] }, asker)).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, users: ['slack:111'] }, asker)).toBe('user');
    expect(refusal({ ...OPEN_RULE, users: ['222'] }, asker)).toBe('user');
    expect(refusal({ ...OPEN_RULE, roles: ['r1'] }, { ...asker, roles: ['r0', 'r1'] })).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, roles: ['r1'] }, asker)).toBe('user');
  });

  it("covers a Slack thread by its channel's entry", () => {
    const thread = { platform: 'slack', userId: 'U1', channel: 'C9/1700000000.0001' };
    expect(refusal({ ...OPEN_RULE, channels: ['C9'] }, thread)).toBeUndefined();
    expect(refusal({ ...OPEN_RULE, channels: ['C8'] }, thread)).toBe('channel');
  });

  it('narrows an agent by its own rule, and always lets operators in', () => {
    const policy: AccessPolicy = {
      rule: OPEN_RULE,
      agents: new Map([['code', { ...OPEN_RULE, users: ['333'] }]]),
      operators: new Set(['999']),
    };
    expect(wakeable(policy, asker, ['data', 'code'])).toEqual({
      allowed: ['data'],
      refused: new Map([['code', 'user']]),
    });
    expect(wakeable(policy, { ...asker, userId: '999' }, ['data', 'code']).allowed).toEqual(['data', 'code']);
  });

  it('expands group:<name> from ACCESS_GROUPS, and names the setting or field of a group not defined', () => {
    const settings = readSettings({ ACCESS_GROUPS: 'team=1 2; oncall=3', ACCESS_USERS: 'group:team,4' });
    expect(globalRule(settings).users).toEqual(['1', '2', '4']);
    expect(agentRule(settings, 'agents/code.md', { roles: ['group:OnCall'] }).roles).toEqual(['3']);
    expect(() => agentRule(settings, 'agents/code.md', { users: ['group:ops'] })).toThrow(
      /agents\/code\.md: access\.users: names group "ops", which ACCESS_GROUPS does not define \(known: team, oncall\)/,
    );
    expect(() => readSettings({ ACCESS_GROUPS: 'no equals sign' })).toThrow(/ACCESS_GROUPS/);
  });
});
