/**
 * A platform that keeps failing to take a post. Failures that pass (5xx, 429, a dropped connection) are tried again
 * with growing waits until the post is out — across a restart too — or an operator drops it; a refusal for good
 * (403 missing access) still hands back at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { metrics } from '../../src/metrics.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
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

/** Tries again quickly: the tests wait for the platform, not for the bridge's minute-long waits. */
const quick = () => 20;

const value = async (metric: { get(): Promise<{ values: Array<{ value: number; labels: object }> }> }, labels = {}) =>
  (await metric.get()).values
    .filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l))
    .reduce((sum, v) => sum + v.value, 0);

async function discordRoom(): Promise<DiscordHarness> {
  const h = await startDiscordHarness({
    agents: [{ name: 'data', activation: 'always', control: true }],
    operators: ['alice'],
    backoff: quick,
  });
  h.llm.respond(() => ({ content: 'the answer' }));
  return h;
}

const posts = (h: DiscordHarness) => h.discord.botMessages('general').map((m) => m.content);
const stored = async (h: DiscordHarness, kind: 'agent' | 'system') =>
  (await history(h.store, 'discord', h.discord.channel('general').id))
    .filter((m) => m.kind === kind)
    .map((m) => m.content);

describe('a platform that keeps failing to take a post', () => {
  it('tries a reply Discord answers with 500 thirty times again until it is posted, and never hands back', async () => {
    const h = await discordRoom();
    discord = h;
    const retriesBefore = await value(metrics.postRetries, { platform: 'discord' });
    // Each try lends the SDK a signal of its own (it never takes its abort listeners off a signal).
    const warnings: string[] = [];
    const warned = (warning: Error) => warnings.push(warning.name);
    process.on('warning', warned);
    h.discord.failRequests({ method: 'POST', path: '/messages', count: 30, status: 500 });
    await h
      .settle(h.discord.humanSays('general', 'alice', 'what is the answer?').id)
      .finally(() => process.off('warning', warned));
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    expect(posts(h)).toEqual(['the answer']);
    expect(await stored(h, 'agent')).toEqual(['the answer']);
    expect((await roomState(h.store, 'discord', h.discord.channel('general').id)).control.holder).toBe('agents');
    expect(await value(metrics.postRetries, { platform: 'discord' })).toBeGreaterThan(retriesBefore);
    expect(await value(metrics.postsWaiting)).toBe(0);
  });

  it('tries a reply Slack answers with 503 five times again until it is posted', async () => {
    const s = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }], backoff: quick });
    slack = s;
    s.llm.respond(() => ({ content: 'the answer' }));
    s.slack.fail('chat.postMessage', ...Array.from({ length: 5 }, () => ({ kind: 'http' as const, status: 503 })));
    const question = s.slack.say(s.alice, s.general, 'what is the answer?');
    await s.settle(question.ts);
    expect(s.slack.calls('chat.postMessage').map((call) => call.status)).toEqual([503, 503, 503, 503, 503, 200]);
    expect(s.slack.posts(s.general).map((m) => m.text)).toEqual(['the answer']);
    const room = `${s.general.id}/${question.ts}`;
    expect((await roomState(s.store, 'slack', room)).control.holder).toBe('agents');
  });

  it('shows a reply that keeps failing in /status and /metrics, keeps it across a restart and posts it once after', async () => {
    const h = await discordRoom();
    discord = h;
    h.discord.failRequests({ method: 'POST', path: '/messages', count: 100_000, status: 502 });
    h.discord.humanSays('general', 'alice', 'what is the answer?');
    await until(async () => (await value(metrics.postsWaiting)) === 1);
    const status = await h.discord.slash('data-bot', 'alice', 'general', 'status');
    expect(status.content).toMatch(
      /Waiting to be posted: @data's reply, \d+ failed tr(y|ies) since [\d:]+ UTC \(discord: data could not post: Bad Gateway\); next try at [\d:]+ UTC\. \/pass or \/reset drops it\./,
    );
    await h.bridge.stop(); // the bridge stops while the platform still fails
    h.discord.stopFailing();
    await h.up();
    await h.bridge.idle();
    expect(posts(h)).toEqual(['the answer']);
    expect(await stored(h, 'agent')).toEqual(['the answer']);
    expect(await value(metrics.postsWaiting)).toBe(0);
  });

  it("starts again when a Slack room's catch-up reads an agent message while the room's reply still waits to be posted", async () => {
    const s = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }], backoff: quick });
    slack = s;
    s.llm.respond(() => ({ content: 'the answer' }));
    const failing = Array.from({ length: 10_000 }, () => ({ kind: 'http' as const, status: 503 }));
    s.slack.fail('chat.postMessage', ...failing);
    const question = s.slack.say(s.alice, s.general, 'what is the answer?');
    await until(async () => (await value(metrics.postsWaiting)) === 1);
    await s.bridge.stop();
    s.slack.recover('chat.postMessage');
    // While the bridge is down, the agent's app says something in the thread (the next start reads it as missed).
    const app = s.apps.code as (typeof s.apps)[string];
    const said = await fetch(`${s.slack.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: s.general.id, thread_ts: question.ts, text: 'a note from before' }),
    });
    expect(((await said.json()) as { ok: boolean }).ok).toBe(true);
    // The start's catch-up does not wait for the reply, which waits for the start.
    await s.up();
    await s.slack.waitFor(
      () => s.slack.posts(s.general).some((m) => m.text === 'the answer'),
      10_000,
      'the reply that waited',
    );
    await s.bridge.idle();
    expect(s.slack.posts(s.general).filter((m) => m.text === 'the answer')).toHaveLength(1);
    const room = `${s.general.id}/${question.ts}`;
    expect((await roomState(s.store, 'slack', room)).posts).toEqual([]);
    // The app's own message, read in the catch-up, is stored too (once the reply is).
    const agent = async () =>
      (await history(s.store, 'slack', room))
        .filter((m) => m.kind === 'agent')
        .map((m) => m.content)
        .sort();
    await until(async () => (await agent()).length === 2);
    expect(await agent()).toEqual(['a note from before', 'the answer']);
  });

  it('lets /pass drop a reply that keeps failing: it is never posted, and the room goes on', async () => {
    const h = await discordRoom();
    discord = h;
    h.discord.failRequests({ method: 'POST', path: '/messages', count: 100_000, status: 500 });
    h.discord.humanSays('general', 'alice', 'what is the answer?');
    await until(async () => (await value(metrics.postsWaiting)) === 1);
    const pass = await h.discord.slash('data-bot', 'alice', 'general', 'pass');
    expect(pass.content).toBe('Control is with the humans (1 waiting post dropped).');
    await until(async () => (await value(metrics.postsWaiting)) === 0);
    h.discord.stopFailing();
    h.llm.respond(() => ({ content: 'the second answer' }));
    await h.settle(h.discord.humanSays('general', 'alice', 'and now?').id);
    expect(posts(h)).toEqual(['the second answer']);
    expect(await stored(h, 'agent')).toEqual(['the second answer']);
  });

  it('hands back at once when Discord refuses a reply for good (403 Missing Access), as before', async () => {
    const h = await discordRoom();
    discord = h;
    h.discord.failRequests({ method: 'POST', path: '/messages', count: 1, status: 403, code: 50001 });
    await h.settle(h.discord.humanSays('general', 'alice', 'what is the answer?').id);
    const data = h.discord.bot('data-bot').id;
    expect(posts(h)).toEqual([`<@${data}>'s reply could not be posted: discord: data could not post: Missing Access`]);
    const state = await roomState(h.store, 'discord', h.discord.channel('general').id);
    expect(state.control).toEqual(expect.objectContaining({ holder: 'humans', reason: 'post failed' }));
    expect(state.posts).toEqual([]);
  });
});
