import { afterEach, describe, expect, it } from 'vitest';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { captureLogger, roomMessagesOf } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';

let h: DiscordHarness;
afterEach(async () => h?.close());

/** The newest room line a model was shown. */
const newest = (request: RecordedRequest) =>
  String(roomMessagesOf(request).at(-1)?.content ?? '').replace(/^\[@[^\]]+\]: /, '');

const stored = async (harness: DiscordHarness, channel = 'general') =>
  (await history(harness.store, 'discord', harness.discord.channel(channel).id, 5000))
    .filter((m) => m.kind === 'human')
    .map((m) => m.content);

const dms = async (harness: DiscordHarness, channel: string) =>
  (await history(harness.store, 'discord', channel, 5000)).filter((m) => m.kind === 'human').map((m) => m.content);

describe('Discord: what was missed while the bridge was down', () => {
  it('is caught up from the last message stored before the restart, also when a live one comes first', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'always' }] });
    h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = h.discord.humanSays('general', 'alice', 'before the restart');
    await h.settle(first.id);
    await h.down();
    for (let i = 1; i <= 5; i++) h.discord.humanSays('general', 'alice', `missed ${i}`);
    // The moment the bot is back, before it can look back, someone writes.
    let live: { id: string } | undefined;
    void h.discord
      .until(() => h.discord.gatewayConnected('code-bot'))
      .then(() => {
        live = h.discord.humanSays('general', 'alice', 'live right after the connect');
      });
    await h.up();
    await h.discord.until(() => live !== undefined);
    await h.settle((live as { id: string }).id);
    await h.bridge.idle();
    expect(await stored(h)).toEqual([
      'before the restart',
      'missed 1',
      'missed 2',
      'missed 3',
      'missed 4',
      'missed 5',
      'live right after the connect',
    ]);
    // The backlog is answered once, as its newest state.
    expect(h.llm.requests.map(newest)).toEqual(['before the restart', 'live right after the connect']);
  });

  it('reads a room again when its catch-up fails, until it succeeds: live messages are answered meanwhile, the backlog once when it comes', async () => {
    const { logger, lines } = captureLogger();
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'always' }], logger });
    h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = h.discord.humanSays('general', 'alice', 'before');
    await h.settle(first.id);
    await h.down();
    for (let i = 1; i <= 3; i++) h.discord.humanSays('general', 'alice', `missed ${i}`);
    // discord.js tries a request 4 times on a 5xx: the first catch-up of #general fails.
    h.discord.failRequests({ method: 'GET', path: `/channels/${h.discord.channel('general').id}/messages`, count: 4 });
    await h.up();
    h.discord.humanSays('general', 'alice', 'live');
    await h.discord.until(() => h.discord.botMessages('general').some((m) => m.content === 're: live'));
    await until(async () => (await stored(h)).length === 5);
    await h.bridge.idle();
    expect(await stored(h)).toEqual(['before', 'live', 'missed 1', 'missed 2', 'missed 3']);
    // The backlog is answered once, as the room's newest state.
    expect(h.llm.requests.map(newest)).toEqual(['before', 'live', 'missed 3']);
    expect(lines.some((line) => String(line.msg).startsWith('discord catch-up failed: trying again'))).toBe(true);
  });

  it('reads the same gap after a restart when a catch-up failed: a mark moves only over history read', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code' }] });
    h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    // A DM room: the bridge knows it, but no catch-up has marked it yet.
    const first = h.discord.dm('alice', 'code-bot', 'before');
    await h.settle(first.id);
    await h.down();
    for (let i = 1; i <= 3; i++) h.discord.dm('alice', 'code-bot', `missed ${i}`);
    h.discord.failRequests({ method: 'GET', path: `/channels/${first.channelId}/messages`, count: 1_000 });
    await h.up();
    const live = h.discord.dm('alice', 'code-bot', 'live');
    await h.settle(live.id);
    await h.down();
    h.discord.stopFailing();
    await h.up();
    await until(async () => (await dms(h, first.channelId)).length === 5);
    await h.bridge.idle();
    expect(await dms(h, first.channelId)).toEqual(['before', 'live', 'missed 1', 'missed 2', 'missed 3']);
    expect(h.llm.requests.map(newest)).toEqual(['before', 'live', 'missed 3']);
  });

  it('reads a gap after a new gateway session from before it, in a room new in this run whose first read fails', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code' }] });
    h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = h.discord.dm('alice', 'code-bot', 'hello');
    await h.settle(first.id);
    h.discord.failRequests({ method: 'GET', path: `/channels/${first.channelId}/messages`, count: 4 });
    h.discord.dropGateway('code-bot', { resumable: false });
    h.discord.dm('alice', 'code-bot', 'said while the bot was away');
    await h.discord.until(() => h.discord.gatewayConnected('code-bot'));
    // Stored before the retry reads the room: it must not move where the retry starts past the gap.
    const live = h.discord.dm('alice', 'code-bot', 'live');
    await h.received(live.id);
    await until(async () => (await dms(h, first.channelId)).length === 3);
    await h.bridge.idle();
    expect(await dms(h, first.channelId)).toEqual(['hello', 'live', 'said while the bot was away']);
  });

  it('answers a backlog of 1,000 missed messages as one conversation: all stored, one model call', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'always' }] });
    h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = h.discord.humanSays('general', 'alice', 'before');
    await h.settle(first.id);
    await h.down();
    for (let i = 1; i <= 1000; i++) h.discord.humanSays('general', 'alice', `missed ${i}`);
    await h.up();
    await h.bridge.idle();
    expect(await stored(h)).toEqual(['before', ...Array.from({ length: 1000 }, (_, i) => `missed ${i + 1}`)]);
    expect(h.llm.requests.map(newest)).toEqual(['before', 'missed 1000']);
  });

  it('keeps the newest CATCHUP_MAX messages when more were missed, and logs what was not fetched', async () => {
    const { logger, lines } = captureLogger();
    h = await startDiscordHarness({ agents: [{ name: 'code' }], env: { CATCHUP_MAX: '10' }, logger });
    h.llm.respond(() => ({ content: '[pass]' }));
    const first = h.discord.humanSays('general', 'alice', 'before');
    await h.settle(first.id);
    await h.down();
    for (let i = 1; i <= 30; i++) h.discord.humanSays('general', 'alice', `missed ${i}`);
    await h.up();
    await h.bridge.idle();
    expect(await stored(h)).toEqual(['before', ...Array.from({ length: 10 }, (_, i) => `missed ${i + 21}`)]);
    expect(lines.some((line) => String(line.msg).startsWith('more messages were missed than CATCHUP_MAX'))).toBe(true);
  });
});

describe('Discord: posts', () => {
  it('posts once per outbox key: a resend returns the message Discord already made', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code' }] });
    const channel = h.discord.channel('general').id;
    const first = await h.adapter.inner.post({ channel, agent: 'code', text: 'only once' }, { key: 'k1.abc' });
    const again = await h.adapter.inner.post({ channel, agent: 'code', text: 'only once' }, { key: 'k1.abc' });
    expect(again.messageIds).toEqual(first.messageIds);
    // Past Discord's nonce window, a resend after a restart finds the post among the room's recent messages.
    h.discord.world.nonces.clear();
    const resent = await h.adapter.inner.post(
      { channel, agent: 'code', text: 'only once' },
      { key: 'k1.abc', resendSince: Date.now() - 10 * 60_000 },
    );
    expect(resent.messageIds).toEqual(first.messageIds);
    expect(h.discord.botMessages('general').map((m) => m.content)).toEqual(['only once']);
  });

  it('caps a huge reply at MAX_REPLY_POSTS posts, the whole reply attached as a file', async () => {
    h = await startDiscordHarness({
      agents: [{ name: 'code', maxOutputTokens: 100_000 }],
      env: { MAX_REPLY_POSTS: '5' },
    });
    const reply = Array.from({ length: 4000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n'); // ~200 KB
    h.llm.respond(() => ({ content: reply }));
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('code-bot').id}> dump it all`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 5);
    await h.settle(asked.id);
    const posts = h.discord.botMessages('general');
    expect(posts).toHaveLength(5);
    const last = posts.at(-1);
    expect(last?.content).toMatch(/^… \([\d,]+ more characters: the whole reply is attached as reply\.md\)$/);
    expect(last?.attachments.map((a) => [a.filename, a.content.toString('utf8')])).toEqual([['reply.md', reply]]);
    // The room's history keeps the whole reply, once.
    const agentMessages = (await history(h.store, 'discord', h.discord.channel('general').id, 50)).filter(
      (m) => m.kind === 'agent',
    );
    expect(agentMessages.map((m) => m.content)).toEqual([reply]);
  });

  it('cuts a huge reply with a note when files cannot be attached', async () => {
    h = await startDiscordHarness({
      agents: [{ name: 'code', maxOutputTokens: 100_000 }],
      env: { MAX_REPLY_POSTS: '3' },
    });
    h.discord.refuseAttachments(true);
    const reply = 'y'.repeat(20_000);
    h.llm.respond(() => ({ content: reply }));
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('code-bot').id}> dump it all`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 3);
    await h.settle(asked.id);
    const posts = h.discord.botMessages('general');
    expect(posts).toHaveLength(3);
    expect(posts.at(-1)?.content).toBe('… [16,000 more characters cut: the reply was longer than 3 messages]');
  });
});
