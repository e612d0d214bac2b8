import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { captureLogger, roomMessagesOf } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';
import { type SlackHarness, startSlackHarness } from '../slack/slack-harness.js';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const newest = (request: RecordedRequest) =>
  String(roomMessagesOf(request).at(-1)?.content ?? '').replace(/^\[@[^\]]+\]: /, '');

const humansIn = async (harness: SlackHarness, room: string) =>
  (await history(harness.store, 'slack', room, 5000)).filter((m) => m.kind === 'human').map((m) => m.content);

/** How many times the apps read history (conversations.history and conversations.replies). */
const reads = (harness: SlackHarness) =>
  harness.slack.calls('conversations.history').length + harness.slack.calls('conversations.replies').length;

const answered = (harness: SlackHarness, text: string) =>
  harness.slack.posts(harness.general).some((m) => m.text === `re: ${text}`);

describe('Slack: what was missed while the bridge was down', () => {
  it('is fetched after a restart: new thread replies and new top-level messages with theirs, each room answered once', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }] });
    const s = h;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'first question');
    await s.settle(first.ts);
    await s.down();
    // Down longer than Slack retries: what was said meanwhile is not delivered again, it must be read.
    s.slack.loseUndelivered(true);
    s.slack.say(s.alice, s.general, 'a follow-up in the thread', { threadTs: first.ts });
    const second = s.slack.say(s.alice, s.general, 'a new question');
    s.slack.say(s.alice, s.general, 'more on the new question', { threadTs: second.ts });
    s.slack.loseUndelivered(false);
    await s.up();
    await s.slack.waitFor(() => s.llm.requests.length >= 3, 10_000, 'the answers');
    await s.bridge.idle();
    const general = s.general.id;
    expect(await humansIn(s, `${general}/${first.ts}`)).toEqual(['first question', 'a follow-up in the thread']);
    expect(await humansIn(s, `${general}/${second.ts}`)).toEqual(['a new question', 'more on the new question']);
    expect(s.llm.requests.map(newest).sort()).toEqual([
      'a follow-up in the thread',
      'first question',
      'more on the new question',
    ]);
  });

  it('answers a missed top-level message that has no replies: its own thread room is caught up with it', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }] });
    const s = h;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'first question');
    await s.settle(first.ts);
    await s.down();
    s.slack.loseUndelivered(true);
    s.slack.say(s.alice, s.general, 'a question nobody replied to');
    s.slack.loseUndelivered(false);
    await s.up();
    await s.slack.waitFor(() => answered(s, 'a question nobody replied to'), 10_000, 'the answer');
    await s.bridge.idle();
    expect(s.llm.requests.map(newest)).toEqual(['first question', 'a question nobody replied to']);
  });

  it('reads a conversation again when its history cannot be read, until it succeeds, answering its backlog once', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }] });
    const s = h;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'first question');
    await s.settle(first.ts);
    await s.down();
    s.slack.loseUndelivered(true);
    s.slack.say(s.alice, s.general, 'a follow-up in the thread', { threadTs: first.ts });
    s.slack.loseUndelivered(false);
    s.slack.fail('conversations.replies', { kind: 'error', error: 'internal_error' });
    await s.up();
    await until(async () => (await humansIn(s, `${s.general.id}/${first.ts}`)).length === 2);
    await s.bridge.idle();
    expect(await humansIn(s, `${s.general.id}/${first.ts}`)).toEqual(['first question', 'a follow-up in the thread']);
    expect(s.llm.requests.map(newest)).toEqual(['first question', 'a follow-up in the thread']);
    expect(s.slack.calls('conversations.replies').length).toBe(2);
  });

  it('reads a retried conversation from before the gap, although a live thread began after it meanwhile', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }] });
    const s = h;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'first question');
    await s.settle(first.ts);
    await s.down();
    s.slack.loseUndelivered(true);
    const missed = s.slack.say(s.alice, s.general, 'said while the bridge was down');
    s.slack.loseUndelivered(false);
    s.slack.fail('conversations.history', { kind: 'error', error: 'internal_error' });
    await s.up();
    const live = s.slack.say(s.alice, s.general, 'a live question');
    await s.settle(live.ts);
    await until(async () => (await humansIn(s, `${s.general.id}/${missed.ts}`)).length === 1);
    await s.bridge.idle();
    expect(s.llm.requests.map(newest)).toEqual(['first question', 'a live question', 'said while the bridge was down']);
  });

  it('reads slowly under Slack limits for non-Marketplace apps, keeps the newest CATCHUP_MAX, logs the rest', async () => {
    const { logger, lines } = captureLogger();
    h = await startSlackHarness({ agents: [{ name: 'code' }], env: { CATCHUP_MAX: '20' }, logger });
    const s = h;
    s.llm.respond(() => ({ content: '[pass]' }));
    const opener = s.slack.say(s.alice, s.general, 'a thread');
    await s.settle(opener.ts);
    await s.down();
    s.slack.loseUndelivered(true);
    for (let i = 1; i <= 40; i++) s.slack.say(s.alice, s.general, `reply ${i}`, { threadTs: opener.ts });
    s.slack.loseUndelivered(false);
    s.slack.limitReads({ perWindow: 1, windowMs: 1000, maxItems: 15 });
    await s.up();
    await until(async () => (await humansIn(s, `${s.general.id}/${opener.ts}`)).length === 21);
    await s.bridge.idle();
    expect(await humansIn(s, `${s.general.id}/${opener.ts}`)).toEqual([
      'a thread',
      ...Array.from({ length: 20 }, (_, i) => `reply ${i + 21}`),
    ]);
    const limited = s.slack.apiCalls.filter((c) => c.method === 'conversations.replies' && c.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(lines.some((line) => String(line.msg).startsWith('more messages were missed than CATCHUP_MAX'))).toBe(true);
  });
});

describe('Slack: live messages while a catch-up reads under Slack limits', () => {
  it('answers a live message at once after a restart, while the catch-up waits out a read a minute', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }] });
    const s = h;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'first question');
    await s.settle(first.ts);
    await s.down();
    s.slack.loseUndelivered(true);
    s.slack.say(s.alice, s.general, 'a follow-up in the thread', { threadTs: first.ts });
    const second = s.slack.say(s.alice, s.general, 'a new question');
    s.slack.say(s.alice, s.general, 'more on the new question', { threadTs: second.ts });
    s.slack.loseUndelivered(false);
    // One read a minute per method: the second thread's replies wait a minute.
    s.slack.limitReads({ perWindow: 1, windowMs: 60_000, maxItems: 15 });
    const starting = s.up();
    await s.slack.connected('code');
    s.slack.say(s.alice, s.general, 'a live question');
    await s.slack.waitFor(() => answered(s, 'a live question'), 10_000, 'the live answer');
    await starting;
    // Still waiting for Slack: the second thread's reply is not read yet.
    expect(await humansIn(s, `${s.general.id}/${second.ts}`)).not.toContain('more on the new question');
  });

  it('reads nothing on a reconnect after a short gap (Slack resends what it could not deliver), answering at once', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'always' }] });
    const s = h;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'first question');
    await s.settle(first.ts);
    const other = s.slack.say(s.alice, s.general, 'another topic');
    await s.settle(other.ts);
    s.slack.limitReads({ perWindow: 1, windowMs: 60_000, maxItems: 15 });
    const before = reads(s);
    s.slack.dropConnections('code');
    await s.slack.waitFor(() => !s.slack.isConnected('code'), 5000, 'the drop');
    s.slack.say(s.alice, s.general, 'said during the gap', { threadTs: first.ts });
    await s.slack.waitFor(() => s.slack.isConnected('code'), 20_000, 'the new connection');
    s.slack.say(s.alice, s.general, 'a live question');
    await s.slack.waitFor(() => answered(s, 'a live question'), 10_000, 'the live answer');
    await s.slack.waitFor(() => answered(s, 'said during the gap'), 10_000, 'the resent one answered');
    await s.bridge.idle();
    expect(reads(s)).toBe(before);
    expect(await humansIn(s, `${s.general.id}/${first.ts}`)).toEqual(['first question', 'said during the gap']);
    expect(s.llm.requests.map(newest)).toEqual([
      'first question',
      'another topic',
      'said during the gap',
      'a live question',
    ]);
  });

  it('catches up in the background on a reconnect after a long gap (Slack resends no more), answering once', async () => {
    let skipped = 0;
    h = await startSlackHarness({
      agents: [{ name: 'code', activation: 'always' }],
      clock: () => Date.now() + skipped,
    });
    const s = h;
    s.llm.respond((request) => ({ content: `re: ${newest(request)}` }));
    const first = s.slack.say(s.alice, s.general, 'first question');
    await s.settle(first.ts);
    const before = reads(s);
    s.slack.loseUndelivered(true);
    s.slack.dropConnections('code');
    // Two minutes pass once the bridge knows its connection dropped.
    await s.slack.waitFor(() => !s.adapter.inner.connected(), 5000, 'the drop');
    s.slack.say(s.alice, s.general, 'said during the gap', { threadTs: first.ts });
    skipped = 2 * 60_000;
    s.slack.loseUndelivered(false);
    await s.slack.waitFor(() => answered(s, 'said during the gap'), 20_000, 'the missed one answered');
    await s.bridge.idle();
    expect(reads(s)).toBeGreaterThan(before);
    expect(await humansIn(s, `${s.general.id}/${first.ts}`)).toEqual(['first question', 'said during the gap']);
    expect(s.llm.requests.map(newest)).toEqual(['first question', 'said during the gap']);
  });
});

describe('Slack: posts', () => {
  it('looks for a post a restart may have sent before posting it again', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code' }] });
    const channel = h.general.id;
    const first = await h.adapter.inner.post({ channel, agent: 'code', text: 'only once' }, { key: 'k1.abc' });
    const resent = await h.adapter.inner.post(
      { channel, agent: 'code', text: 'only once' },
      { key: 'k1.abc', resendSince: Date.now() - 5000 },
    );
    expect(resent.messageIds).toEqual(first.messageIds);
    expect(h.slack.posts(h.general).map((m) => m.text)).toEqual(['only once']);
  });

  it('caps a huge reply at MAX_REPLY_POSTS posts, the whole reply uploaded as reply.md', async () => {
    h = await startSlackHarness({
      agents: [{ name: 'code', maxOutputTokens: 100_000 }],
      env: { MAX_REPLY_POSTS: '5' },
    });
    const s = h;
    const reply = Array.from({ length: 4000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
    s.llm.respond(() => ({ content: reply }));
    const asked = s.slack.say(s.alice, s.general, `<@${s.apps.code?.botUserId}> dump it all`);
    await s.slack.waitFor(() => s.slack.posts(s.general).length >= 5, 10_000, 'five posts');
    await s.settle(asked.ts);
    await s.bridge.idle();
    const posts = s.slack.posts(s.general);
    expect(posts).toHaveLength(5);
    expect(posts.at(-1)?.text).toMatch(/^… \([\d,]+ more characters: the whole reply is attached as reply\.md\)$/);
    const file = [...s.slack.workspace.files.values()].find((f) => f.name === 'reply.md');
    expect(file?.content.toString('utf8')).toBe(reply);
    const room = await s.store.rooms.open('slack', `${s.general.id}/${asked.ts}`);
    expect((await s.store.rooms.history(room.id, 50)).filter((m) => m.kind === 'agent').map((m) => m.content)).toEqual([
      reply,
    ]);
  });

  it('cuts a huge reply with a note when the app may not upload files (no files:write)', async () => {
    h = await startSlackHarness({
      agents: [{ name: 'code', maxOutputTokens: 100_000 }],
      env: { MAX_REPLY_POSTS: '3' },
    });
    const s = h;
    s.slack.withoutFilesWrite.add('code');
    s.llm.respond(() => ({ content: 'y'.repeat(20_000) }));
    const asked = s.slack.say(s.alice, s.general, `<@${s.apps.code?.botUserId}> dump it all`);
    await s.slack.waitFor(() => s.slack.posts(s.general).length >= 3, 10_000, 'three posts');
    await s.settle(asked.ts);
    const posts = s.slack.posts(s.general);
    expect(posts).toHaveLength(3);
    expect(posts.at(-1)?.text).toBe('… [12,000 more characters cut: the reply was longer than 3 messages]');
  });
});
