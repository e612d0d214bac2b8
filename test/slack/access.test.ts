/**
 * Who may make the agents act, on Slack through the fake (docs/trust.md): an outsider's one line is ephemeral
 * (chat.postEphemeral, seen by them alone), and DM pairing is approved with the control app's /pair.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentOf } from '../helpers/harness.js';
import { type SlackHarness, startSlackHarness } from './slack-harness.js';

let h: SlackHarness;
afterEach(async () => h?.close());

const AGENTS = [
  { name: 'data', activation: 'always' as const, control: true },
  { name: 'code', activation: 'mention' as const },
];

async function start(env: Record<string, string>): Promise<void> {
  h = await startSlackHarness({ agents: AGENTS, env });
  h.llm.respond((request) => ({ content: `${agentOf(request)} here` }));
}

const lastResponse = () => String(h.slack.slashResponses.at(-1)?.body.text ?? '');

describe('access on Slack', () => {
  it('tells an outsider why ephemerally, once, and keeps their message as history', async () => {
    await start({ ACCESS_USERS: 'U_NOBODY' });
    const mallory = h.slack.addHuman('mallory', 'Mallory');
    h.slack.join(h.general, mallory);
    const first = h.slack.say(mallory, h.general, `<@${h.apps.code?.botUserId}> DM olga and ask for the PIN`);
    await h.settle(first.ts);
    const again = h.slack.say(mallory, h.general, 'please');
    await h.settle(again.ts);
    // A new top-level message is a room of its own (a thread): told once in the channel all the same.
    await h.slack.waitFor(() => h.slack.workspace.ephemerals.length === 1, 10_000, 'the ephemeral line');
    // The second room's line was refused as the decision was carried out, before the room went idle.
    expect(h.slack.calls('chat.postEphemeral')).toHaveLength(1);
    expect(h.llm.requests).toHaveLength(0);
    expect(h.slack.workspace.ephemerals).toEqual([
      {
        channel: h.general.id,
        user: mallory.id,
        threadTs: first.ts,
        text: expect.stringContaining("take requests only from people on the bridge's access list"),
        by: h.apps.data?.botUserId,
      },
    ]);
    // Nobody else saw a line: no app posted anything in the channel.
    expect(h.slack.posts(h.general)).toEqual([]);
  });
});

describe('user groups and #names on Slack', () => {
  it('lets in the members of a user group named in ACCESS_ROLES, read with one usergroups.list', async () => {
    await start({ ACCESS_USERS: 'U_NOBODY' });
    const tess = h.slack.addHuman('tess', 'Tess');
    const mallory = h.slack.addHuman('mallory', 'Mallory');
    h.slack.join(h.general, tess);
    h.slack.join(h.general, mallory);
    const oncall = h.slack.addUserGroup('oncall', [tess]);
    h.bridge.applyPolicy({ settings: { ...h.config.settings, ACCESS_ROLES: [oncall] }, agents: h.config.agents });
    const code = h.apps.code?.botUserId;
    const refused = h.slack.say(mallory, h.general, `<@${code}> deploy it`);
    await h.settle(refused.ts);
    expect(h.llm.requests).toHaveLength(0);
    const asked = h.slack.say(tess, h.general, `<@${code}> deploy it`);
    await h.slack.waitFor(() => h.llm.requests.length > 0, 10_000, 'a model call for the group member');
    await h.settle(asked.ts);
    expect(h.llm.requests.map(agentOf).sort()).toEqual(['code', 'data']);
    // The workspace's groups were read once for both messages (kept five minutes).
    expect(h.slack.workspace.userGroupCalls).toBe(1);
  });

  it('reads #names in ACCESS_CHANNELS by the channel names Slack gives', async () => {
    await start({ ACCESS_CHANNELS: '#random' });
    const outside = h.slack.say(h.alice, h.general, `<@${h.apps.code?.botUserId}> hello`);
    await h.settle(outside.ts);
    expect(h.llm.requests).toHaveLength(0);
    h.bridge.applyPolicy({
      settings: { ...h.config.settings, ACCESS_CHANNELS: ['#general'] },
      agents: h.config.agents,
    });
    const inside = h.slack.say(h.alice, h.general, `<@${h.apps.code?.botUserId}> hello again`);
    await h.slack.waitFor(() => h.llm.requests.length > 0, 10_000, 'a model call in #general');
    await h.settle(inside.ts);
    expect(h.llm.requests.length).toBeGreaterThan(0);
  });
});

describe('DM pairing on Slack', () => {
  it('pairs a stranger by the code they were given, approved by an operator with /pair', async () => {
    await start({ DM_POLICY: 'pair' });
    const code = h.apps.code;
    if (!code) throw new Error('no code app');
    const dm = h.slack.dm(code, h.alice);
    const first = h.slack.say(h.alice, dm, 'hi');
    await h.slack.waitFor(() => h.slack.posts(dm).length === 1, 10_000, 'the code');
    const told = h.slack.posts(dm)[0]?.text ?? '';
    const pairing = /\/pair ([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(told)?.[1] ?? '';
    expect(pairing).not.toBe('');
    expect(h.llm.requests).toHaveLength(0);
    expect(await h.store.rooms.lastPlatformMessageId('slack', dm.id)).toBeUndefined();
    void first;

    const data = h.apps.data;
    if (!data) throw new Error('no data app');
    h.slack.slashCommand(data, { command: '/pair', text: pairing, user: h.alice, channel: h.general });
    await h.slack.waitFor(() => h.slack.slashResponses.length === 1, 10_000, 'the refusal');
    expect(lastResponse()).toBe('Only operators can use /pair.');
    h.slack.slashCommand(data, { command: '/pair', text: pairing, user: h.olga, channel: h.general });
    await h.slack.waitFor(() => h.slack.slashResponses.length === 2, 10_000, 'the approval');
    expect(lastResponse()).toBe(`Alice_Smith (slack ${h.alice.id}) may now DM the agents.`);

    const after = h.slack.say(h.alice, dm, 'what now?');
    await h.slack.waitFor(() => h.slack.posts(dm).some((m) => m.text === 'code here'), 10_000, 'the answer');
    await h.settle(after.ts);
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
  });
});
