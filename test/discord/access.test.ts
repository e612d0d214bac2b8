/**
 * Who may make the agents act, on Discord through the fake (docs/trust.md): the access lists (users, roles,
 * channels, an agent's own), the one line an outsider reads, and DM pairing with /pair.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentOf } from '../helpers/harness.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

let h: DiscordHarness;
afterEach(async () => h?.close());

const AGENTS = [
  { name: 'data', activation: 'always' as const, control: true },
  { name: 'code', activation: 'mention' as const },
];
const TEAM_ROLE = '990000000000000001';
const HUMANS = [
  { name: 'alice', nick: 'Alice' },
  { name: 'carol' },
  { name: 'mallory' },
  { name: 'tess', roles: [TEAM_ROLE] },
  { name: 'otto' },
];

type Agents = Parameters<typeof startDiscordHarness>[0]['agents'];

async function start(env: Record<string, string>, agents: Agents = AGENTS, accessUsers: string[] = []) {
  h = await startDiscordHarness({ agents, humans: HUMANS, operators: ['otto'], accessUsers, env });
  h.llm.respond((request) => ({ content: `${agentOf(request)} here` }));
}

const id = (name: string) => h.discord.human(name).id;
const contents = (channel: string) => h.discord.botMessages(channel).map((m) => m.content);

describe('access on Discord', () => {
  it("keeps an outsider's message as history, wakes nobody, and tells them why once", async () => {
    await start({}, AGENTS, ['alice']);
    expect(h.config.settings.ACCESS_USERS).toEqual([id('alice')]);

    const code = h.discord.bot('code-bot');
    const first = h.discord.humanSays('general', 'mallory', `<@${code.id}> post the roadmap in #announcements`);
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(first.id);
    const again = h.discord.humanSays('general', 'mallory', `<@${code.id}> please?`);
    await h.settle(again.id);
    expect(h.llm.requests).toHaveLength(0);
    expect(contents('general')).toEqual([
      `<@${id('mallory')}>: code, data take requests only from people on the bridge's access list, so your message was kept as history and woke nobody. An operator can add you (see /access).`,
    ]);
    const room = await h.store.rooms.open('discord', h.discord.channel('general').id);
    expect((await h.store.rooms.history(room.id, 10)).map((m) => `${m.author}: ${m.content}`)).toEqual([
      'mallory: @code post the roadmap in #announcements',
      'mallory: @code please?',
    ]);

    const asked = h.discord.humanSays('general', 'alice', `<@${code.id}> hello`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 3);
    await h.settle(asked.id);
    expect(h.llm.requests.map(agentOf).sort()).toEqual(['code', 'data']);
  });

  it('lets in the holders of a role named in ACCESS_ROLES, and operators always', async () => {
    await start({ ACCESS_ROLES: TEAM_ROLE });
    const code = h.discord.bot('code-bot');
    const byRole = h.discord.humanSays('general', 'tess', `<@${code.id}> hi`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 2);
    await h.settle(byRole.id);
    expect(h.llm.requests.map(agentOf).sort()).toEqual(['code', 'data']);
    const byOperator = h.discord.humanSays('dev', 'otto', `<@${code.id}> hi`);
    await h.discord.until(() => h.discord.botMessages('dev').length >= 2);
    await h.settle(byOperator.id);
    const byOther = h.discord.humanSays('dev', 'carol', `<@${code.id}> hi`);
    await h.settle(byOther.id);
    await h.discord.until(() => contents('dev').some((text) => text.includes('take requests only from people')));
    expect(h.llm.requests).toHaveLength(4);
  });

  it('reads the roles of a member whose message a catch-up fetched (it comes without its member)', async () => {
    await start({ ACCESS_ROLES: TEAM_ROLE });
    const code = h.discord.bot('code-bot');
    const first = h.discord.humanSays('general', 'tess', `<@${code.id}> hi`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 2);
    await h.settle(first.id);
    await h.down();
    h.discord.humanSays('general', 'tess', `<@${code.id}> said while you were away`);
    await h.up();
    await h.discord.until(() => h.llm.requests.length >= 4);
    await h.bridge.idle();
    expect(contents('general').some((text) => text.includes('access list'))).toBe(false);
  });

  it('answers only in the channels ACCESS_CHANNELS names, by #name', async () => {
    await start({ ACCESS_CHANNELS: '#dev' });
    const code = h.discord.bot('code-bot');
    const elsewhere = h.discord.humanSays('general', 'alice', `<@${code.id}> hi`);
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(elsewhere.id);
    expect(h.llm.requests).toHaveLength(0);
    expect(contents('general')[0]).toContain('do not answer in this channel');
    const here = h.discord.humanSays('dev', 'alice', `<@${code.id}> hi`);
    await h.discord.until(() => h.discord.botMessages('dev').length >= 2);
    await h.settle(here.id);
    expect(h.llm.requests.map(agentOf).sort()).toEqual(['code', 'data']);
  });

  it("narrows one agent by its file's access: the others still answer everyone", async () => {
    await start({}, [
      { name: 'data', activation: 'always', control: true },
      { name: 'code', activation: 'mention', access: { users: ['nobody-here'], roles: [TEAM_ROLE], channels: [] } },
    ]);
    const code = h.discord.bot('code-bot');
    const sent = h.discord.humanSays('general', 'carol', `<@${code.id}> run it`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 2);
    await h.settle(sent.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['data']);
    expect(contents('general')).toContain(
      `<@${id('carol')}>: code takes requests only from people on the bridge's access list, so your message was kept as history and woke nobody. An operator can add you (see /access).`,
    );
    const byTeam = h.discord.humanSays('general', 'tess', `<@${code.id}> run it`);
    await h.discord.until(() => h.llm.requests.some((r) => agentOf(r) === 'code'));
    await h.settle(byTeam.id);
  });
});

describe('DM pairing on Discord (DM_POLICY=pair)', () => {
  it('gives a stranger a code and stores nothing until an operator approves it with /pair', async () => {
    await start({ DM_POLICY: 'pair' });
    const first = h.discord.dm('carol', 'code-bot', 'hi, what is the deploy PIN?');
    await h.discord.until(() => h.discord.botMessages(first.channelId).length === 1);
    const [told] = contents(first.channelId);
    const code = /\/pair ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(told ?? '')?.[1];
    expect(told).toContain('nothing you write here reaches it until then');
    expect(code).toBeDefined();
    const second = h.discord.dm('carol', 'code-bot', 'hello?');
    await h.received(second.id);
    await h.bridge.idle();
    // Reminded at most every ten minutes; nothing stored, no model call.
    expect(h.discord.botMessages(first.channelId)).toHaveLength(1);
    expect(h.llm.requests).toHaveLength(0);
    expect(await h.store.rooms.lastPlatformMessageId('discord', first.channelId)).toBeUndefined();

    // A member who is no operator cannot approve it, not even their own.
    const byCarol = await h.discord.slash('data-bot', 'carol', 'general', 'pair', { code: code ?? '' });
    expect(byCarol.content).toBe('Only operators can use /pair.');
    const list = await h.discord.slash('data-bot', 'otto', 'general', 'pair');
    expect(list.content).toContain(`${code} carol (discord ${id('carol')}`);
    const approved = await h.discord.slash('data-bot', 'otto', 'general', 'pair', { code: (code ?? '').toLowerCase() });
    expect(approved).toMatchObject({
      ephemeral: true,
      content: `carol (discord ${id('carol')}) may now DM the agents.`,
    });
    await h.discord.until(() => h.discord.botMessages(first.channelId).length === 2);
    expect(contents(first.channelId)[1]).toContain('An operator approved you');

    const after = h.discord.dm('carol', 'code-bot', 'now?');
    await h.discord.until(() => h.discord.botMessages(first.channelId).length === 3);
    await h.settle(after.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
    expect(contents(first.channelId)[2]).toBe('code here');
    // The code was used: it approves no one again.
    const reused = await h.discord.slash('data-bot', 'otto', 'general', 'pair', { code: code ?? '' });
    expect(reused.content).toContain(`No code ${code} is waiting`);
  });

  it('locks /pair for an operator after five wrong codes', async () => {
    await start({ DM_POLICY: 'pair' });
    for (let i = 0; i < 5; i++) {
      const wrong = await h.discord.slash('data-bot', 'otto', 'general', 'pair', { code: `AAAA-AAA${i}` });
      expect(wrong.content).toContain('is waiting');
    }
    const locked = await h.discord.slash('data-bot', 'otto', 'general', 'pair', { code: 'AAAA-AAA9' });
    expect(locked.content).toContain('Too many wrong codes');
  });

  it('takes no DMs at all with DM_POLICY=off, but an operator still gets through', async () => {
    await start({ DM_POLICY: 'off' });
    const refused = h.discord.dm('carol', 'code-bot', 'hi');
    await h.discord.until(() => h.discord.botMessages(refused.channelId).length === 1);
    expect(contents(refused.channelId)[0]).toContain('take no direct messages');
    const operator = h.discord.dm('otto', 'code-bot', 'hi');
    await h.discord.until(() => h.discord.botMessages(operator.channelId).length === 1);
    await h.settle(operator.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
  });

  it('shows the policy in force with /access, to anyone', async () => {
    await start({ ACCESS_CHANNELS: '#dev', DM_POLICY: 'pair' });
    const shown = await h.discord.slash('data-bot', 'carol', 'general', 'access');
    expect(shown.content).toContain('Who may wake the agents: everyone the platform lets in, in #dev.');
    expect(shown.content).toContain('Direct messages: pair');
  });

  it('puts a changed access list into force at the next message, without a restart', async () => {
    await start({}, AGENTS, ['alice']);
    const code = h.discord.bot('code-bot');
    const refused = h.discord.humanSays('general', 'mallory', `<@${code.id}> hello`);
    await h.settle(refused.id);
    expect(h.llm.requests).toHaveLength(0);

    const settings = { ...h.config.settings, ACCESS_USERS: [id('alice'), id('mallory')], DM_POLICY: 'off' as const };
    h.bridge.applyPolicy({ settings, agents: h.config.agents });
    const shown = await h.discord.slash('data-bot', 'carol', 'general', 'access');
    expect(shown.content).toContain('Direct messages: off');
    const letIn = h.discord.humanSays('general', 'mallory', `<@${code.id}> hello again`);
    await h.discord.until(() => h.llm.requests.length >= 2);
    await h.settle(letIn.id);
    expect(h.llm.requests.map(agentOf).sort()).toEqual(['code', 'data']);
  });
});
