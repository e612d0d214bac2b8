import { App, LogLevel } from '@slack/bolt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
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

  describe('an app with several Socket Mode connections (several bridges on one app)', () => {
    let fake: FakeSlack;
    afterEach(async () => {
      await fake?.close();
    });

    /** A Bolt connection of the app that records each message event it gets (text, retry number). */
    async function connection(app: ReturnType<FakeSlack['addApp']>, seen: Array<{ text: string; retry: number }>) {
      const bolt = new App({
        token: app.botToken,
        appToken: app.appToken,
        socketMode: true,
        logger: quiet,
        clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
      });
      apps.push(bolt);
      bolt.event('message', async ({ event, context }) => {
        seen.push({ text: 'text' in event ? (event.text ?? '') : '', retry: context.retryNum ?? 0 });
      });
      await bolt.start();
      return bolt;
    }

    /** A connection that takes envelopes and never acknowledges them (a bridge that died or is paused). */
    async function silentConnection(app: ReturnType<FakeSlack['addApp']>): Promise<{ ws: WebSocket; got: string[] }> {
      const got: string[] = [];
      const ws = new WebSocket(fake.socketUrl(app));
      ws.on('message', (data) => {
        const envelope = JSON.parse(String(data)) as { payload?: { event?: { text?: string } } };
        if (envelope.payload?.event?.text) got.push(envelope.payload.event.text);
      });
      await new Promise((resolve) => ws.once('open', resolve));
      return { ws, got };
    }

    it('gives each event to one open connection, each connection in turn', async () => {
      fake = await startFakeSlack();
      fake.socketMode({ choice: 'round-robin' });
      const app = fake.addApp('shared');
      const alice = fake.addHuman('alice');
      const room = fake.addChannel('turns', [alice, app]);
      const first: Array<{ text: string; retry: number }> = [];
      const second: Array<{ text: string; retry: number }> = [];
      await connection(app, first);
      await connection(app, second);
      await fake.waitFor(() => fake.isConnected('shared'), 5000, 'connections');

      for (const text of ['one', 'two', 'three', 'four']) fake.say(alice, room, text);
      await fake.waitFor(() => first.length + second.length === 4, 5000, 'events');

      expect([first.length, second.length]).toEqual([2, 2]);
      expect([...first, ...second].map((e) => e.text).sort()).toEqual(['four', 'one', 'three', 'two']);
      expect(new Set(fake.deliveries.map((d) => d.connection)).size).toBe(2);
    });

    it('sends an envelope not acknowledged in time again, to another open connection, with retry_attempt', async () => {
      fake = await startFakeSlack();
      fake.socketMode({ choice: 'round-robin', redeliverAfterMs: 200 });
      const app = fake.addApp('retrying');
      const alice = fake.addHuman('alice');
      const room = fake.addChannel('slow', [alice, app]);
      const silent = await silentConnection(app);
      const acking: Array<{ text: string; retry: number }> = [];
      await connection(app, acking);

      fake.say(alice, room, 'first');
      fake.say(alice, room, 'second');
      await fake.waitFor(() => acking.length === 2, 5000, 'both events at the acknowledging connection');

      // Round-robin gave one of them to the silent connection first; it came back as a retry.
      expect(silent.got).toHaveLength(1);
      expect(acking.find((e) => e.text === silent.got[0])?.retry).toBe(1);
      expect(acking.filter((e) => e.retry === 0)).toHaveLength(1);
      silent.ws.terminate();
    });

    it('sends again what a connection left unacknowledged when it closed, and keeps the default of no retries', async () => {
      fake = await startFakeSlack();
      const app = fake.addApp('closing');
      const alice = fake.addHuman('alice');
      const room = fake.addChannel('closing', [alice, app]);
      const acking: Array<{ text: string; retry: number }> = [];
      await connection(app, acking);
      const silent = await silentConnection(app);
      // By default the newest connection gets every envelope and nothing is retried.
      fake.say(alice, room, 'kept by the default');
      await fake.waitFor(() => silent.got.length === 1, 5000, 'the newest connection');
      fake.socketMode({ redeliverAfterMs: 60_000 });
      fake.say(alice, room, 'left behind');
      await fake.waitFor(() => silent.got.length === 2, 5000, 'the second event');

      silent.ws.terminate();
      await fake.waitFor(() => acking.length === 1, 5000, 'the retry after the close');

      expect(acking).toEqual([{ text: 'left behind', retry: 1 }]);
      expect(fake.deliveries.at(-1)?.envelope.retry_reason).toBe('connection_closed');
    });
  });
});
