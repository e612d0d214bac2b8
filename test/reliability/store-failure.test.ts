/**
 * A store that cannot write while the bridge runs. The full disk is SQLite's own (test/helpers/full-disk.ts): the
 * database may not grow (`max_page_count`) and its pages are full, so every message write fails with SQLITE_FULL,
 * "database or disk is full", as on a real full disk; `free()` gives the space back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { failingLine, recoveredLine } from '../../src/bridge/loop/store-outage.js';
import { metrics } from '../../src/metrics.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { fillDisk } from '../helpers/full-disk.js';
import { captureLogger, roomMessagesOf } from '../helpers/harness.js';
import { history, roomState } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';
import { type SlackHarness, startSlackHarness } from '../slack/slack-harness.js';

let discord: DiscordHarness | undefined;
let slack: SlackHarness | undefined;
afterEach(async () => {
  await discord?.close();
  await slack?.close();
  discord = undefined;
  slack = undefined;
});

/** Tries again quickly: the tests wait for the store, not for the bridge's minute-long waits. */
const quick = () => 20;
const FULL = failingLine(new Error('database or disk is full'));

const newest = (request: RecordedRequest) =>
  String(roomMessagesOf(request).at(-1)?.content ?? '').replace(/^\[@[^\]]+\]: /, '');

const value = async (metric: { get(): Promise<{ values: Array<{ value: number }> }> }) =>
  (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);

async function humans(h: DiscordHarness, channel = 'general'): Promise<string[]> {
  const messages = await history(h.store, 'discord', h.discord.channel(channel).id);
  return messages.filter((m) => m.kind === 'human').map((m) => m.content);
}

/** The bridge's own lines in the channel (the agent answers start with `re:`). */
const lines = (h: DiscordHarness) =>
  h.discord
    .botMessages('general')
    .map((m) => m.content)
    .filter((text) => !text.startsWith('re: '));

async function discordRoom(env: Record<string, string> = {}) {
  const h = await startDiscordHarness({ agents: [{ name: 'data', activation: 'always' }], backoff: quick, env });
  h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
  const first = h.discord.humanSays('general', 'alice', 'before');
  await h.settle(first.id);
  return h;
}

describe('a full disk while the bridge runs', () => {
  it('holds the messages in memory, says so once, and stores and answers them in order when space is back', async () => {
    const h = await discordRoom();
    discord = h;
    const failuresBefore = await value(metrics.storeFailures);
    const disk = fillDisk(h.store.db);
    for (let i = 1; i <= 5; i++) h.discord.humanSays('general', 'alice', `during ${i}`);
    await until(async () => (await value(metrics.inboundHeld)) === 5);
    await h.discord.until(() => lines(h).length > 0);
    expect(lines(h)).toEqual([FULL]);
    expect(h.llm.requests).toHaveLength(1);
    expect(await value(metrics.storeFailures)).toBeGreaterThan(failuresBefore);

    disk.free();
    await h.discord.until(() => lines(h).length === 2);
    await h.bridge.idle();
    expect(await humans(h)).toEqual(['before', 'during 1', 'during 2', 'during 3', 'during 4', 'during 5']);
    expect(lines(h)).toEqual([FULL, recoveredLine(5)]);
    // Answered once the messages were stored, up to the newest of them.
    expect(h.llm.requests.length).toBeGreaterThan(1);
    expect(roomMessagesOf(h.llm.requests.at(-1) as RecordedRequest).map((m) => m.content)).toContain(
      '[@Alice]: during 5',
    );
    expect(await value(metrics.inboundHeld)).toBe(0);
  });

  it('reads the messages it held when the bridge stopped again from Discord: its catch-up mark stays before them', async () => {
    const h = await discordRoom();
    discord = h;
    const disk = fillDisk(h.store.db);
    for (let i = 1; i <= 3; i++) h.discord.humanSays('general', 'alice', `during ${i}`);
    await until(async () => (await value(metrics.inboundHeld)) === 3);
    // A new gateway session: the room is caught up, and the adapter marks it up to the newest message it has.
    h.discord.dropGateway('data-bot', { resumable: false });
    await h.discord.until(() => !h.discord.gatewayConnected('data-bot'));
    await h.discord.connected('data-bot');
    const live = h.discord.humanSays('general', 'alice', 'during 4');
    await h.received(live.id); // live messages wait for the room's catch-up: it is over
    await h.bridge.stop(); // a crash: what was held in memory is gone
    disk.free();
    await h.up();
    await h.bridge.idle();
    expect(await humans(h)).toEqual(['before', 'during 1', 'during 2', 'during 3', 'during 4']);
    expect(h.discord.botMessages('general').map((m) => m.content)).toContain('re: during 4');
    // The line about the store, read again by the catch-up, is the bridge's own: not an agent's message.
    expect(lines(h)).toEqual([FULL]);
    const stored = await history(h.store, 'discord', h.discord.channel('general').id);
    expect(stored.filter((m) => m.content === FULL)).toEqual([]);
  });

  it('keeps at most HELD_MESSAGES_MAX, counts and logs the rest, and reads those again at the next start', async () => {
    const { logger, lines: log } = captureLogger();
    const h = await startDiscordHarness({
      agents: [{ name: 'data', activation: 'always' }],
      backoff: quick,
      env: { HELD_MESSAGES_MAX: '2' },
      logger,
    });
    discord = h;
    h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    await h.settle(h.discord.humanSays('general', 'alice', 'before').id);
    const lostBefore = await value(metrics.inboundLost);
    const disk = fillDisk(h.store.db);
    const said = [1, 2, 3, 4].map((i) => h.discord.humanSays('general', 'alice', `during ${i}`));
    await until(async () => (await value(metrics.inboundLost)) === lostBefore + 2);
    expect(await value(metrics.inboundHeld)).toBe(2);
    expect(log).toContainEqual(
      expect.objectContaining({ level: 50, id: said[3]?.id, msg: expect.stringContaining('HELD_MESSAGES_MAX') }),
    );
    disk.free();
    await h.discord.until(() => lines(h).length === 2);
    await h.bridge.idle();
    expect(await humans(h)).toEqual(['before', 'during 1', 'during 2']);
    // A catch-up after a new session marks the room again: not past what it lost.
    h.discord.dropGateway('data-bot', { resumable: false });
    await h.discord.until(() => !h.discord.gatewayConnected('data-bot'));
    await h.discord.connected('data-bot');
    await h.settle(h.discord.humanSays('general', 'alice', 'after').id);
    await h.down();
    await h.up();
    await h.bridge.idle();
    expect(await humans(h)).toEqual(['before', 'during 1', 'during 2', 'after', 'during 3', 'during 4']);
  });

  it('answers a command the store cannot take yet that it waits, and carries it out once there is space', async () => {
    const h = await startDiscordHarness({
      agents: [{ name: 'data', activation: 'always', control: true }],
      operators: ['alice'],
      backoff: quick,
    });
    discord = h;
    h.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    await h.settle(h.discord.humanSays('general', 'alice', 'before').id);
    const disk = fillDisk(h.store.db);
    h.discord.humanSays('general', 'alice', 'during');
    await until(async () => (await value(metrics.inboundHeld)) === 1);
    const pass = await h.discord.slash('data-bot', 'alice', 'general', 'pass');
    expect(pass.content).toBe(
      '/pass waits: the bridge cannot save to its store right now; it is carried out as soon as it can.',
    );
    disk.free();
    await h.discord.until(() => lines(h).length === 2);
    await h.bridge.idle();
    const state = await roomState(h.store, 'discord', h.discord.channel('general').id);
    expect(state.control).toEqual(expect.objectContaining({ holder: 'humans', reason: '/pass' }));
    expect(await humans(h)).toEqual(['before', 'during']);
  });

  it('holds the messages of a room it cannot even create yet (a read-only database) and creates it when it can', async () => {
    const h = await discordRoom();
    discord = h;
    // SQLite's own read-only switch: every write fails as on a database this user may not write.
    h.store.db.pragma('query_only = ON');
    h.discord.humanSays('dev', 'alice', 'first in dev');
    h.discord.humanSays('dev', 'alice', 'second in dev');
    const inDev = () => h.discord.botMessages('dev').map((m) => m.content);
    await h.discord.until(() => inDev().length > 0);
    expect(inDev()).toEqual([failingLine(new Error('attempt to write a readonly database'))]);
    expect(await value(metrics.inboundHeld)).toBe(2);
    h.store.db.pragma('query_only = OFF');
    await h.discord.until(() => inDev().some((text) => text.startsWith('re: ')));
    await h.bridge.idle();
    expect(await humans(h, 'dev')).toEqual(['first in dev', 'second in dev']);
    expect(inDev().slice(0, 2)).toEqual([inDev()[0], recoveredLine(2)]);
  });

  it('holds Slack messages the same way: one line in the thread, stored and answered when space is back', async () => {
    const s = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }], backoff: quick });
    slack = s;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'before');
    await s.settle(first.ts);
    const room = `${s.general.id}/${first.ts}`;
    const inThread = () => s.slack.posts(s.general).filter((m) => m.threadTs === first.ts);
    const bridgeLines = () =>
      inThread()
        .map((m) => m.text)
        .filter((text) => !text.startsWith('re: '));
    const disk = fillDisk(s.store.db);
    for (let i = 1; i <= 3; i++) s.slack.say(s.alice, s.general, `during ${i}`, { threadTs: first.ts });
    await until(async () => (await value(metrics.inboundHeld)) === 3);
    await s.slack.waitFor(() => bridgeLines().length > 0, 10_000, 'the line about the store');
    expect(bridgeLines()).toEqual([FULL]);
    disk.free();
    await s.slack.waitFor(() => bridgeLines().length === 2, 10_000, 'the line about the store working again');
    await s.bridge.idle();
    const stored = (await history(s.store, 'slack', room)).filter((m) => m.kind === 'human').map((m) => m.content);
    expect(stored).toEqual(['before', 'during 1', 'during 2', 'during 3']);
    expect(bridgeLines()).toEqual([FULL, recoveredLine(3)]);
    const shown = roomMessagesOf(s.llm.requests.at(-1) as RecordedRequest).map((m) => String(m.content));
    expect(shown.some((text) => text.endsWith(': during 3'))).toBe(true);
  });
});
