import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../adapters/slack/index.js';
import { silentLogger } from '../../src/log.js';
import { type FakeApp, type FakeHuman, type FakeSlack, startFakeSlack } from '../fakes/slack/index.js';
import { testConfig } from '../helpers/config.js';
import { RecordingSink, slackKeys } from './recording-sink.js';

describe('Slack adapter with a recording sink', () => {
  let slack: FakeSlack;
  let data: FakeApp;
  let code: FakeApp;
  let alice: FakeHuman;
  let operator: FakeHuman;
  const running: SlackAdapter[] = [];

  beforeAll(async () => {
    slack = await startFakeSlack();
    data = slack.addApp('data');
    code = slack.addApp('code');
    alice = slack.addHuman('alice', 'Alice Smith');
    operator = slack.addHuman('olga', 'Olga');
  });
  afterEach(async () => {
    for (const adapter of running.splice(0)) await adapter.stop();
  });
  afterAll(async () => {
    await slack.close();
  });

  async function start(env: Record<string, string> = {}): Promise<{ adapter: SlackAdapter; sink: RecordingSink }> {
    const config = testConfig({
      agents: [
        { name: 'data', slack: slackKeys(data, { control: true }) },
        { name: 'code', slack: slackKeys(code) },
      ],
      env: { SLACK_API_URL: slack.apiUrl, OPERATORS: operator.id, ...env },
    });
    const adapter = new SlackAdapter({ config, logger: silentLogger() });
    const sink = new RecordingSink();
    running.push(adapter);
    await adapter.start(sink);
    await slack.connected('data', 'code');
    return { adapter, sink };
  }

  it('forwards a channel message once although both apps receive it, as a thread room with names for mentions', async () => {
    const { sink } = await start();
    const room = slack.addChannel('general', [alice, data, code]);

    const message = slack.say(alice, room, `<@${code.botUserId}> can you &amp; <@${data.botUserId}> look?`);
    await slack.waitFor(() => sink.received.length === 1, 5000, 'forward');
    await slack.waitFor(() => slack.deliveries.every((d) => slack.acks.some((a) => a.envelopeId === d.envelopeId)));

    expect(slack.deliveries.filter((d) => d.envelope.type === 'events_api').length).toBeGreaterThanOrEqual(3);
    expect(sink.received).toEqual([
      {
        platform: 'slack',
        channel: `${room.id}/${message.ts}`,
        messageId: message.ts,
        author: { id: alice.id, name: 'Alice_Smith', kind: 'human' },
        text: '@code can you & @data look?',
        at: Math.round(Number(message.ts) * 1000),
        // For ACCESS_CHANNELS' #names (conversations.info, once per channel).
        channelName: 'general',
      },
    ]);
  });

  it('keeps the channel as the room when replies do not go in threads, and a thread reply in its thread', async () => {
    const { sink } = await start({ SLACK_REPLY_IN_THREAD: 'false' });
    const room = slack.addChannel('flat', [alice, data]);

    const top = slack.say(alice, room, 'top level');
    slack.say(alice, room, 'in a thread', { threadTs: top.ts });
    await slack.waitFor(() => sink.received.length === 2, 5000, 'forwards');

    expect(sink.received.map((e) => e.channel)).toEqual([room.id, `${room.id}/${top.ts}`]);
  });

  it('marks a DM as the private room of the app it was sent to', async () => {
    const { sink } = await start();
    const dm = slack.dm(code, alice);

    slack.say(alice, dm, 'just for you');
    await slack.waitFor(() => sink.received.length === 1, 5000, 'dm');

    expect(sink.received[0]).toMatchObject({ channel: dm.id, direct: { agent: 'code' }, text: 'just for you' });
  });

  it('posts through the agent’s own app in the thread, with mrkdwn and real mentions', async () => {
    const { adapter, sink } = await start();
    const room = slack.addChannel('posting', [alice, data, code]);
    const message = slack.say(alice, room, 'hello');
    await slack.waitFor(() => sink.received.length === 1, 5000, 'forward');

    const posted = await adapter.post({
      channel: sink.received[0]?.channel ?? '',
      agent: 'code',
      text: '**Done**, @Alice_Smith. Ask @data about [the log](https://x.test/log).',
    });
    const echo = await slack.waitFor(() => sink.received[1], 5000, 'echo');

    const post = slack.posts(room)[0];
    expect(post).toMatchObject({
      user: code.botUserId,
      threadTs: message.ts,
      text: `*Done*, <@${alice.id}>. Ask <@${data.botUserId}> about <https://x.test/log|the log>.`,
    });
    expect(posted.messageIds).toEqual([post?.ts]);
    expect(echo).toMatchObject({
      channel: `${room.id}/${message.ts}`,
      messageId: post?.ts,
      author: { id: code.botUserId, name: 'code', kind: 'agent' },
      text: '*Done*, @Alice_Smith. Ask @data about the log (https://x.test/log).',
    });
  });

  it('posts system messages through the control app, and in a DM through the app that owns it', async () => {
    const { adapter, sink } = await start();
    const room = slack.addChannel('system', [alice, data, code]);
    const dm = slack.dm(code, alice);
    slack.say(alice, dm, 'hi code');
    await slack.waitFor(() => sink.received.length === 1, 5000, 'dm');

    await adapter.post({ channel: room.id, agent: null, text: 'Control is back with the humans.' });
    await adapter.post({ channel: dm.id, agent: null, text: 'The turn limit was reached.' });

    expect(slack.posts(room).map((m) => m.user)).toEqual([data.botUserId]);
    expect(slack.posts(dm).map((m) => m.user)).toEqual([code.botUserId]);
  });

  it('splits a long reply into several messages and reports every id', async () => {
    const { adapter } = await start({ SLACK_REPLY_IN_THREAD: 'false' });
    const room = slack.addChannel('long', [alice, code]);
    const text = ['Here is the file:', '```ts', ...Array.from({ length: 400 }, (_, i) => `const v${i} = ${i};`), '```'];

    const posted = await adapter.post({ channel: room.id, agent: 'code', text: text.join('\n') });

    const posts = slack.posts(room);
    expect(posts.length).toBeGreaterThan(1);
    expect(posted.messageIds).toEqual(posts.map((p) => p.ts));
    for (const post of posts) {
      expect(post.text.length).toBeLessThanOrEqual(4000);
      expect(post.text.split('\n').filter((l) => l.startsWith('```')).length % 2).toBe(0);
    }
  });

  it('waits out a 429 and posts once, and never re-posts after a lost response', async () => {
    const { adapter } = await start({ SLACK_REPLY_IN_THREAD: 'false' });
    const room = slack.addChannel('limits', [alice, code]);

    slack.fail('chat.postMessage', { kind: 'rate-limit', retryAfterS: 0 });
    const posted = await adapter.post({ channel: room.id, agent: 'code', text: 'after the limit' });
    slack.fail('chat.postMessage', { kind: 'drop-after' });
    const lost = adapter.post({ channel: room.id, agent: 'code', text: 'response lost' });

    await expect(lost).rejects.toThrow(/could not post/);
    expect(posted.messageIds).toHaveLength(1);
    expect(slack.posts(room).map((m) => m.text)).toEqual(['after the limit', 'response lost']);
    const calls = slack.apiCalls.filter((c) => c.method === 'chat.postMessage' && c.args.channel === room.id);
    expect(calls.map((c) => c.status)).toEqual([429, 200, 200]);
  });

  it('delivers edits as edits, ignores joins and foreign bots, forwards an allowlisted bot as a human, and a re-delivery once', async () => {
    const { sink } = await start({ SLACK_ALLOWED_BOTS: 'helper' });
    const room = slack.addChannel('noise', [alice, data]);
    const helper = slack.addApp('helper');
    const stranger = slack.addApp('stranger');
    slack.join(room, helper);
    slack.join(room, stranger);

    const first = slack.say(alice, room, 'original');
    slack.edit(first, 'edited');
    await slack.waitFor(() => sink.received.length === 2, 5000, 'first and its edit');
    const delivered = slack.deliveries.find(
      (d) => d.app === 'data' && (d.envelope as { payload: { event: { ts?: string } } }).payload.event.ts === first.ts,
    );
    slack.redeliver(delivered?.envelopeId ?? '', { attempt: 1, reason: 'timeout' });
    await fetch(`${slack.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stranger.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: room.id, text: 'I am not allowed' }),
    });
    await fetch(`${slack.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${helper.botToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: room.id, text: 'I am allowed' }),
    });
    await slack.waitFor(() => sink.received.length === 3, 5000, 'allowed bot');
    const acked = () =>
      slack.deliveries
        .filter((d) => d.app === 'data')
        .every((d) => slack.acks.some((a) => a.envelopeId === d.envelopeId));
    await slack.waitFor(acked, 5000, 'acks');

    expect(sink.received.map((e) => [e.text, e.author.kind, e.author.name, e.edit?.of])).toEqual([
      ['original', 'human', 'Alice_Smith', undefined],
      ['edited', 'human', 'Alice_Smith', first.ts],
      ['I am allowed', 'human', 'helper', undefined],
    ]);
    expect(sink.received[1]?.messageId).toBe(`${first.ts}:edit:${first.editedTs}`);
  });

  it('forwards a shared message as a quote and ignores Slackbot in the DM', async () => {
    const { sink } = await start();
    const room = slack.addChannel('shares', [alice, data, code]);
    const elsewhere = slack.addChannel('sales', [alice, operator]);
    const original = slack.say(operator, elsewhere, 'Q3 numbers are final');
    const dm = slack.dm(data, alice);

    slack.slackbot(dm, 'You have been removed from #ops');
    const shared = slack.share(alice, room, original);
    await slack.waitFor(() => sink.received.length === 1, 5000, 'share');

    expect(sink.received[0]).toMatchObject({ messageId: shared.ts, text: '> Olga: Q3 numbers are final' });
  });

  it('acknowledges envelopes it has no listener for: interactive payloads and other slash commands', async () => {
    const { sink } = await start();
    const room = slack.addChannel('buttons', [alice, operator, data, code]);
    const envelopes = [
      slack.blockAction(code, { user: alice, channel: room, actionId: 'approve_deploy' }),
      slack.shortcut(data, { user: alice, callbackId: 'open_ticket' }),
      slack.slashCommand(data, { command: '/deploy', text: 'prod', user: operator, channel: room }),
      slack.slashCommand(code, { command: '/pass', user: operator, channel: room }),
    ];
    const ackOf = (id: string) => slack.acks.find((ack) => ack.envelopeId === id);
    await slack.waitFor(() => envelopes.every((id) => ackOf(id)), 10_000, 'acks');

    expect(ackOf(envelopes[0] ?? '')?.payload).toEqual({});
    expect(ackOf(envelopes[2] ?? '')?.payload).toEqual({
      text: '/deploy is not a Roundtable command here: use /pass, /reset, /status, /privacy, /budget, /access, /pair, /approve or /deny.',
    });
    expect(ackOf(envelopes[3] ?? '')?.payload?.text).toMatch(/^\/pass is not handled by this app/);
    expect(sink.commands).toEqual([]);
  });

  it('takes slash commands on the control app, with the operator flag, and answers ephemerally', async () => {
    const { sink } = await start();
    const room = slack.addChannel('ops', [alice, operator, data, code]);
    const top = slack.say(alice, room, 'start something');
    await slack.waitFor(() => sink.received.length === 1, 5000, 'forward');

    slack.slashCommand(data, { command: '/pass', text: ' code ', user: operator, channel: room });
    slack.slashCommand(data, { command: '/status', user: alice, channel: room });
    await slack.waitFor(() => slack.slashResponses.length === 2, 5000, 'answers');

    expect(sink.commands).toEqual([
      {
        platform: 'slack',
        channel: `${room.id}/${top.ts}`,
        name: 'pass',
        args: 'code',
        user: { id: operator.id, name: 'olga' },
        isOperator: true,
        id: expect.any(String),
        reply: expect.stringContaining('/response/'),
      },
      {
        platform: 'slack',
        channel: `${room.id}/${top.ts}`,
        name: 'status',
        args: '',
        user: { id: alice.id, name: 'alice' },
        isOperator: false,
        id: expect.any(String),
        reply: expect.stringContaining('/response/'),
      },
    ]);
    // Each carries its own trigger_id, by which bridges sharing a store claim it once.
    expect(new Set(sink.commands.map((event) => event.id)).size).toBe(2);
    expect(slack.slashResponses.map((r) => r.body)).toEqual([
      { response_type: 'ephemeral', text: 'In the latest thread here: done (pass)' },
      { response_type: 'ephemeral', text: 'In the latest thread here: done (status)' },
    ]);
  });

  it('answers a command another bridge received through its response_url, that bridge gone', async () => {
    const { sink, adapter } = await start();
    sink.command = (event) => {
      sink.commands.push(event);
      return new Promise<string>(() => {}); // the bridge that received it dies while it waits
    };
    const room = slack.addChannel('handed', [alice, operator, data, code]);
    const before = slack.slashResponses.length;
    slack.slashCommand(data, { command: '/pass', user: operator, channel: room });
    await slack.waitFor(() => sink.commands.length === 1, 5000, 'the command');
    const route = sink.commands[0]?.reply;
    if (route === undefined) throw new Error('the command came with its response_url');
    await adapter.answerCommand?.(route, 'Control is with the humans.');
    expect(slack.slashResponses.slice(before).map((r) => r.body)).toEqual([
      { response_type: 'ephemeral', text: 'Control is with the humans.' },
    ]);
    const gone = adapter.answerCommand?.('http://127.0.0.1:1/response/x', 'again');
    await expect(gone).rejects.toThrow(/^slack: the command could not be answered through its response_url$/);
  });

  it('leaves a slash command another bridge claimed unanswered', async () => {
    const { sink } = await start();
    sink.command = async (event) => {
      sink.commands.push(event);
      return event.name === 'status' ? undefined : 'done';
    };
    const room = slack.addChannel('claimed', [alice, operator, data, code]);
    const before = slack.slashResponses.length;
    slack.slashCommand(data, { command: '/status', user: operator, channel: room });
    await slack.waitFor(() => sink.commands.length === 1, 5000, 'the claimed command');
    slack.slashCommand(data, { command: '/pass', user: operator, channel: room });
    await slack.waitFor(() => slack.slashResponses.length > before, 5000, 'an answer');
    await slack.waitFor(() => sink.commands.length === 2, 5000, 'both commands');
    expect(slack.slashResponses.slice(before).map((r) => r.body)).toEqual([
      { response_type: 'ephemeral', text: 'done' },
    ]);
  });

  it('splits a long command answer into several ephemeral responses, never cutting it', async () => {
    const { sink } = await start();
    const long = Array.from(
      { length: 200 },
      (_, i) => `- @agent${i}: ${i * 1000} in (${i * 900} cached), ${i} out`,
    ).join('\n');
    expect(long.length).toBeGreaterThan(8000);
    sink.command = async (event) => {
      sink.commands.push(event);
      return long;
    };
    const room = slack.addChannel('long', [alice, data, code]);
    const before = slack.slashResponses.length;
    slack.slashCommand(data, { command: '/status', user: operator, channel: room });
    const texts = () => slack.slashResponses.slice(before).map((r) => (r.body as { text: string }).text);
    await slack.waitFor(() => texts().join('\n').length >= long.length, 5000, 'responses');
    expect(texts().length).toBeGreaterThanOrEqual(3);
    expect(texts().every((text) => text.length <= 4000)).toBe(true);
    expect(texts().join('\n')).toBe(long);
  });
});

describe('Slack adapter setup errors', () => {
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await slack.close();
  });

  it('names SLACK_PORT when an agent is in HTTP mode without it', () => {
    const app = slack.addApp('web');
    const config = testConfig({ agents: [{ name: 'web', slack: slackKeys(app, { http: true }) }] });
    expect(() => new SlackAdapter({ config, logger: silentLogger() })).toThrow(/SLACK_PORT: must be set/);
  });

  it('fails to start with the agent named when its bot token is refused, and leaves nothing connected', async () => {
    const good = slack.addApp('good');
    const config = testConfig({
      agents: [
        { name: 'good', slack: slackKeys(good) },
        {
          name: 'broken',
          slack: { botToken: 'xoxb-wrong', appToken: 'xapp-wrong', signingSecret: undefined, control: false },
        },
      ],
      env: { SLACK_API_URL: slack.apiUrl },
    });
    const adapter = new SlackAdapter({ config, logger: silentLogger() });

    await expect(adapter.start(new RecordingSink())).rejects.toThrow(/agent broken: auth.test failed: .*invalid_auth/);
    expect(slack.apiCalls.some((c) => c.method === 'apps.connections.open')).toBe(false);
  });
});

describe('Slack DMs after a restart', () => {
  it("posts the bridge's own messages in a DM through that DM's app, known from the store", async () => {
    const slack = await startFakeSlack();
    const data = slack.addApp('data');
    const code = slack.addApp('code');
    const alice = slack.addHuman('alice', 'Alice Smith');
    const dm = slack.dm(code, alice);
    const config = testConfig({
      agents: [
        { name: 'data', slack: slackKeys(data, { control: true }) },
        { name: 'code', slack: slackKeys(code) },
      ],
      env: { SLACK_API_URL: slack.apiUrl },
    });
    const adapter = new SlackAdapter({ config, logger: silentLogger() });
    const sink = new RecordingSink();
    const withRooms = Object.assign(sink, { directRooms: () => [{ channel: dm.id, agent: 'code' }] });
    try {
      await adapter.start(withRooms);
      await slack.connected('data', 'code');
      await adapter.post({ channel: dm.id, agent: null, text: 'control is back with you' });
      const [posted] = slack.posts(dm);
      expect(posted?.user).toBe(code.botUserId);
    } finally {
      await adapter.stop();
      await slack.close();
    }
  });
});
