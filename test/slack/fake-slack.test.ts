import { App, LogLevel } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';

const quiet = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => LogLevel.ERROR,
  setName() {},
};

describe('fake Slack, driven by the real Bolt', () => {
  let slack: FakeSlack;
  const apps: InstanceType<typeof App>[] = [];

  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop();
  });
  afterAll(async () => {
    await slack.close();
  });

  function socketApp(name: string): InstanceType<typeof App> {
    const fakeApp = slack.workspace.apps.get(name) ?? slack.addApp(name);
    const app = new App({
      token: fakeApp.botToken,
      appToken: fakeApp.appToken,
      socketMode: true,
      logger: quiet,
      clientOptions: { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } },
    });
    apps.push(app);
    return app;
  }

  it('serves auth.test and Socket Mode so Bolt receives a message and says a form-encoded reply', async () => {
    const echo = socketApp('echo');
    const seen: Array<{ botUserId: string | undefined; text: string | undefined }> = [];
    echo.message(async ({ message, say, context }) => {
      seen.push({ botUserId: context.botUserId, text: 'text' in message ? message.text : undefined });
      await say(`heard: ${'text' in message ? message.text : ''}`);
    });
    await echo.start();
    const alice = slack.addHuman('alice', 'Alice Smith');
    const room = slack.addChannel('echo-room', [alice, slack.app('echo')]);

    slack.say(alice, room, 'hello');
    const reply = await slack.waitFor(() => slack.posts(room)[0], 5000, 'reply');

    expect(reply.text).toBe('heard: hello');
    expect(seen).toEqual([{ botUserId: slack.app('echo').botUserId, text: 'hello' }]);
    const post = slack.apiCalls.find((c) => c.method === 'chat.postMessage');
    expect(post?.contentType).toContain('application/x-www-form-urlencoded');
    expect(post?.app).toBe('echo');
    const delivered = slack.deliveries.filter((d) => d.app === 'echo').map((d) => d.envelopeId);
    await slack.waitFor(() => delivered.every((id) => slack.acks.some((a) => a.envelopeId === id)), 5000, 'acks');
  });

  it('fans a message out to every app in the channel, app_mention to the mentioned one, DMs to one app', async () => {
    const one = socketApp('one');
    const two = socketApp('two');
    const events: string[] = [];
    for (const [name, app] of [
      ['one', one],
      ['two', two],
    ] as const) {
      app.event('message', async ({ event }) => {
        events.push(`${name}:message:${'text' in event ? event.text : ''}`);
      });
      app.event('app_mention', async ({ event }) => {
        events.push(`${name}:app_mention:${event.text}`);
      });
    }
    await Promise.all([one.start(), two.start()]);
    const bob = slack.addHuman('bob');
    const room = slack.addChannel('both', [bob, slack.app('one'), slack.app('two')]);
    const mention = `<@${slack.app('two').botUserId}> hi`;

    slack.say(bob, room, mention);
    slack.say(bob, slack.dm(slack.app('one'), bob), 'private');
    await slack.waitFor(() => events.length >= 4, 5000, 'events');

    expect(events.sort()).toEqual(
      [`one:message:${mention}`, `two:message:${mention}`, `two:app_mention:${mention}`, 'one:message:private'].sort(),
    );
  });

  it("delivers one app's post to the other apps in the channel, while Bolt filters the app's own echo", async () => {
    const speaker = socketApp('speaker');
    const listener = socketApp('listener');
    const heard: string[] = [];
    speaker.event('message', async () => {
      heard.push('speaker');
    });
    listener.event('message', async ({ event }) => {
      heard.push(`listener:${'bot_id' in event ? event.bot_id : 'human'}`);
    });
    await Promise.all([speaker.start(), listener.start()]);
    const room = slack.addChannel('bots', [slack.app('speaker'), slack.app('listener')]);

    await speaker.client.chat.postMessage({ channel: room.id, text: 'from the speaker' });
    await slack.waitFor(() => heard.length > 0, 5000, 'listener');
    await slack.waitFor(
      () =>
        slack.deliveries
          .filter((d) => d.app === 'speaker')
          .every((d) => slack.acks.some((a) => a.envelopeId === d.envelopeId)),
      5000,
      'speaker acks',
    );

    expect(heard).toEqual([`listener:${slack.app('speaker').botId}`]);
  });

  it('re-delivers an envelope with retry_attempt and retry_reason', async () => {
    const app = socketApp('retried');
    const retries: Array<number | undefined> = [];
    app.event('message', async ({ context }) => {
      retries.push(context.retryNum);
    });
    await app.start();
    const carol = slack.addHuman('carol');
    const room = slack.addChannel('retry', [carol, slack.app('retried')]);

    slack.say(carol, room, 'once');
    await slack.waitFor(() => retries.length === 1, 5000, 'first');
    const first = slack.deliveries.filter((d) => d.app === 'retried').at(-1);
    slack.redeliver(first?.envelopeId ?? '', { attempt: 1, reason: 'timeout' });
    await slack.waitFor(() => retries.length === 2, 5000, 'retry');

    expect(retries).toEqual([0, 1]);
  });

  it('sends slash commands, records the ack and the response_url answer', async () => {
    const app = socketApp('control');
    app.command('/status', async ({ ack, respond, command }) => {
      await ack();
      await respond({ response_type: 'ephemeral', text: `status for ${command.user_id}` });
    });
    await app.start();
    const dave = slack.addHuman('dave');
    const room = slack.addChannel('cmd', [dave, slack.app('control')]);

    const envelopeId = slack.slashCommand(slack.app('control'), { command: '/status', user: dave, channel: room });
    const answer = await slack.waitFor(() => slack.slashResponses.find((r) => r.app === 'control'), 5000, 'response');

    expect(answer.body).toMatchObject({ response_type: 'ephemeral', text: `status for ${dave.id}` });
    expect(slack.acks.some((a) => a.envelopeId === envelopeId)).toBe(true);
  });

  it('sends edits as message_changed and joins as channel_join', async () => {
    const app = socketApp('subtypes');
    const subtypes: Array<string | undefined> = [];
    app.event('message', async ({ event }) => {
      subtypes.push(event.subtype);
    });
    await app.start();
    const erin = slack.addHuman('erin');
    const room = slack.addChannel('edits', [erin, slack.app('subtypes')]);

    const message = slack.say(erin, room, 'draft');
    slack.edit(message, 'final');
    slack.join(room, slack.addHuman('frank'));
    await slack.waitFor(() => subtypes.length === 3, 5000, 'events');

    expect(subtypes).toEqual([undefined, 'message_changed', 'channel_join']);
  });

  it("updates and deletes an app's own message, telling the channel (message_changed, message_deleted)", async () => {
    const app = socketApp('editor');
    const watcher = socketApp('watcher');
    const subtypes: Array<string | undefined> = [];
    watcher.event('message', async ({ event }) => {
      subtypes.push(event.subtype);
    });
    await Promise.all([app.start(), watcher.start()]);
    const room = slack.addChannel('drafts', [slack.app('editor'), slack.app('watcher')]);

    const posted = await app.client.chat.postMessage({ channel: room.id, text: 'draft' });
    await app.client.chat.update({ channel: room.id, ts: posted.ts ?? '', text: 'final' });
    const edited = slack.posts(room).map((m) => [m.text, m.edited]);
    await expect(watcher.client.chat.delete({ channel: room.id, ts: posted.ts ?? '' })).rejects.toThrow(
      /cant_delete_message/,
    );
    await app.client.chat.delete({ channel: room.id, ts: posted.ts ?? '' });
    await slack.waitFor(() => subtypes.length === 3, 5000, 'events');

    expect(edited).toEqual([['final', true]]);
    expect(slack.posts(room)).toEqual([]);
    expect(slack.workspace.deleted.map((m) => m.ts)).toEqual([posted.ts]);
    expect(subtypes).toEqual([undefined, 'message_changed', 'message_deleted']);
    expect(slack.calls('chat.delete').map((c) => [c.app, c.args.ts])).toEqual([
      ['watcher', posted.ts],
      ['editor', posted.ts],
    ]);
  });

  it('answers 429 with Retry-After when told to, and serves history and replies', async () => {
    const app = socketApp('reader');
    const gina = slack.addHuman('gina');
    const room = slack.addChannel('history', [gina, slack.app('reader')]);
    const parent = slack.say(gina, room, 'parent');
    slack.say(gina, room, 'in thread', { threadTs: parent.ts });
    slack.say(gina, room, 'later');
    slack.fail('conversations.history', { kind: 'rate-limit', retryAfterS: 0 });

    await expect(app.client.conversations.history({ channel: room.id })).rejects.toThrow(/rate limit/);
    const history = await app.client.conversations.history({ channel: room.id });
    const replies = await app.client.conversations.replies({ channel: room.id, ts: parent.ts });

    expect(slack.apiCalls.filter((c) => c.method === 'conversations.history').map((c) => c.status)).toEqual([429, 200]);
    expect(history.messages?.map((m) => m.text)).toEqual(['later', 'parent']);
    expect(replies.messages?.map((m) => m.text)).toEqual(['parent', 'in thread']);
  });

  it('signs events for an HTTP-mode app: Bolt accepts a good signature and answers 401 to a forged or stale one', async () => {
    const fakeApp = slack.addApp('http');
    const app = new App({
      token: fakeApp.botToken,
      signingSecret: fakeApp.signingSecret,
      logger: quiet,
      clientOptions: { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } },
    });
    apps.push(app);
    const texts: string[] = [];
    app.event('message', async ({ event }) => {
      texts.push('text' in event ? (event.text ?? '') : '');
    });
    const server = (await app.start(0)) as import('node:http').Server;
    const { port } = server.address() as import('node:net').AddressInfo;
    fakeApp.requestUrl = `http://127.0.0.1:${port}/slack/events`;
    const event = {
      type: 'message',
      channel: 'C1',
      channel_type: 'channel',
      user: 'U1',
      text: 'signed',
      ts: '1.000001',
    };

    const good = await slack.postEvent(fakeApp, event);
    const forged = await slack.postEvent(fakeApp, { ...event, text: 'forged' }, { secret: 'wrong' });
    const stale = await slack.postEvent(fakeApp, { ...event, text: 'stale' }, { timestampS: Date.now() / 1000 - 600 });
    await slack.waitFor(() => texts.length === 1, 5000, 'event');

    expect([good.status, forged.status, stale.status]).toEqual([200, 401, 401]);
    expect(texts).toEqual(['signed']);
  });
});
