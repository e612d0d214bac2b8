import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { NO_ROOM } from '../../adapters/discord/commands.js';
import { createDiscordAdapter } from '../../adapters/discord/index.js';
import { silentLogger } from '../../src/log.js';
import type { AdapterSink, ChatAdapter, CommandEvent, Inbound } from '../../src/ports.js';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { testConfig } from '../helpers/config.js';
import { until } from '../helpers/until.js';

/** A sink that records what the adapter hands over, like the bridge would receive it. */
class RecordingSink implements AdapterSink {
  readonly inbound: Inbound[] = [];
  readonly commands: CommandEvent[] = [];
  private readonly last = new Map<string, string>();
  private readonly waiters: (() => void)[] = [];

  async receive(event: Inbound): Promise<void> {
    this.inbound.push(event);
    this.last.set(event.channel, event.messageId);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** As the bridge says when another bridge sharing its store claimed the command: it answers, not this one. */
  claimedElsewhere = false;

  async command(event: CommandEvent): Promise<string | undefined> {
    this.commands.push(event);
    if (this.claimedElsewhere) return undefined;
    return `${event.name} ${event.args} operator=${event.isOperator}`;
  }

  lastMessageId(_platform: string, channel: string): string | undefined {
    return this.last.get(channel);
  }

  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

describe('Discord adapter against the fake', () => {
  let fake: FakeDiscord;
  let adapter: ChatAdapter;
  const sink = new RecordingSink();

  beforeAll(async () => {
    fake = await startFakeDiscord({
      bots: [
        { token: 'tok-data', name: 'data-bot' },
        { token: 'tok-code', name: 'code-bot' },
        { token: 'tok-reviewer', name: 'reviewer-bot' },
        { token: 'tok-helper', name: 'helper' },
        { token: 'tok-stranger', name: 'stranger' },
      ],
      humans: [{ name: 'alice', nick: 'Alice Smith' }, { name: 'bob', manageChannels: true }, { name: 'carol' }],
      channels: ['general', 'dev'],
    });
    const config = testConfig({
      agents: [
        { name: 'data', discord: { token: 'tok-data', control: false } },
        { name: 'code', discord: { token: 'tok-code', control: true } },
        { name: 'reviewer', discord: { token: 'tok-reviewer', control: false } },
        { name: 'plain' },
      ],
      env: {
        DISCORD_API_URL: fake.apiURL,
        OPERATORS: fake.human('alice').id,
        DISCORD_ALLOWED_BOTS: fake.bot('helper').id,
      },
    });
    adapter = createDiscordAdapter({ config, logger: silentLogger(), rest: { globalRequestsPerSecond: 10_000 } });
    await adapter.start(sink);
  });

  afterAll(async () => {
    await adapter?.stop();
    await fake?.close();
  });

  beforeEach(() => {
    sink.inbound.length = 0;
    sink.commands.length = 0;
  });

  it('forwards a channel message once although every agent bot receives it', async () => {
    const sent = fake.humanSays('general', 'alice', `<@${fake.bot('code-bot').id}> can you look?`);
    fake.humanSays('general', 'carol', 'marker');
    await sink.until(() => sink.inbound.some((event) => event.text === 'marker'));
    const copies = sink.inbound.filter((event) => event.messageId === sent.id);
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({
      platform: 'discord',
      channel: fake.channel('general').id,
      author: { id: fake.human('alice').id, name: 'Alice_Smith', kind: 'human' },
      text: '@code can you look?',
    });
    expect(copies[0]?.direct).toBeUndefined();
  });

  it('marks messages from our agent bots as agent messages', async () => {
    fake.botSays('general', 'reviewer-bot', `looks fine <@${fake.human('alice').id}>`);
    await sink.until(() => sink.inbound.length > 0);
    expect(sink.inbound[0]?.author).toMatchObject({ name: 'reviewer', kind: 'agent' });
    expect(sink.inbound[0]?.text).toBe('looks fine @Alice_Smith');
  });

  it('ignores a foreign bot unless it is allowlisted, which then counts as a human', async () => {
    fake.botSays('general', 'stranger', 'beep');
    fake.botSays('general', 'helper', 'boop');
    await sink.until(() => sink.inbound.some((event) => event.text === 'boop'));
    expect(sink.inbound.map((event) => event.text)).toEqual(['boop']);
    expect(sink.inbound[0]?.author).toMatchObject({ name: 'helper', kind: 'human' });
  });

  it("makes a human's reply to an agent's message address that agent, and an agent's reply address no one", async () => {
    const agentMessage = fake.botSays('general', 'data-bot', 'here is the plan');
    await sink.until(() => sink.inbound.some((event) => event.messageId === agentMessage.id));
    const reply = fake.humanSays('general', 'carol', 'why this order?', { replyTo: agentMessage.id });
    const botReply = fake.botSays('general', 'code-bot', 'agreed', { replyTo: agentMessage.id });
    const toHuman = fake.humanSays('general', 'alice', 'same question', { replyTo: reply.id });
    await sink.until(() => [reply, botReply, toHuman].every((m) => sink.inbound.some((e) => e.messageId === m.id)));
    const received = (id: string) => sink.inbound.find((event) => event.messageId === id);
    // The reply's ping is not in the text; the reply itself addresses the agent.
    expect(received(reply.id)).toMatchObject({ text: 'why this order?', addressed: ['data'] });
    expect(received(botReply.id)?.addressed).toBeUndefined();
    expect(received(toHuman.id)?.addressed).toBeUndefined();
  });

  it('delivers a human edit once, marked as an edit of the message, and ignores link previews resolving', async () => {
    const sent = fake.humanSays('dev', 'alice', 'can someone look at the build?');
    await sink.until(() => sink.inbound.some((event) => event.messageId === sent.id));
    fake.embedResolves(sent);
    fake.humanEdits(sent, `<@${fake.bot('code-bot').id}> can someone look at the build?`);
    await sink.until(() => sink.inbound.some((event) => event.edit?.of === sent.id));
    fake.humanSays('dev', 'alice', 'marker');
    await sink.until(() => sink.inbound.some((event) => event.text === 'marker'));
    const edits = sink.inbound.filter((event) => event.edit);
    expect(edits).toEqual([
      {
        platform: 'discord',
        channel: fake.channel('dev').id,
        messageId: `${sent.id}:edit:${sent.editedAt}`,
        author: { id: fake.human('alice').id, name: 'Alice_Smith', kind: 'human' },
        text: '@code can someone look at the build?',
        channelName: 'dev',
        edit: { of: sent.id, originalAt: sent.createdAt },
        at: sent.editedAt,
      },
    ]);
  });

  it('forwards a forwarded message as a quote, its mentions addressing no one', async () => {
    const original = fake.humanSays('dev', 'bob', `<@${fake.bot('code-bot').id}> the build is red`);
    await sink.until(() => sink.inbound.some((event) => event.messageId === original.id));
    const forward = fake.forward('general', 'alice', original);
    await sink.until(() => sink.inbound.some((event) => event.messageId === forward.id));
    expect(forward.content).toBe('');
    expect(sink.inbound.find((event) => event.messageId === forward.id)?.text).toBe('> code the build is red');
  });

  it('forwards a forward that holds only an attachment, with the file ready to download', async () => {
    const original = fake.humanSays('dev', 'bob', '', {
      attachments: [{ filename: 'crash.log', contentType: 'text/plain', content: 'panic: out of memory\n' }],
    });
    await sink.until(() => sink.inbound.some((event) => event.messageId === original.id));
    const forward = fake.forward('general', 'alice', original);
    await sink.until(() => sink.inbound.some((event) => event.messageId === forward.id));
    const received = sink.inbound.find((event) => event.messageId === forward.id);
    expect(received).toMatchObject({ text: '', author: { name: 'Alice_Smith', kind: 'human' } });
    expect(received?.files?.map((file) => [file.name, file.mimeType, file.size])).toEqual([
      ['crash.log', 'text/plain', 21],
    ]);
    expect(Buffer.from((await received?.files?.[0]?.download()) ?? []).toString()).toBe('panic: out of memory\n');
  });

  it("reads a bot's embed as text, in a message of its own and in a forward of it", async () => {
    const embeds = [
      {
        type: 'rich',
        title: 'Build #812 failed',
        description: 'main: 3 tests red',
        fields: [{ name: 'Branch', value: 'main', inline: true }],
        footer: { text: 'CI' },
      },
      { type: 'link', url: 'https://example.com/', title: 'Example Domain' }, // a link preview: the link is in the text
    ];
    const own = fake.botSays('dev', 'helper', '', { embeds });
    await sink.until(() => sink.inbound.some((event) => event.messageId === own.id));
    const text = 'Build #812 failed\nmain: 3 tests red\nBranch: main\nCI';
    expect(sink.inbound.find((event) => event.messageId === own.id)?.text).toBe(text);
    const forward = fake.forward('general', 'alice', own);
    await sink.until(() => sink.inbound.some((event) => event.messageId === forward.id));
    expect(sink.inbound.find((event) => event.messageId === forward.id)?.text).toBe(
      text
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n'),
    );
  });

  it("reads a mention of an agent bot's managed role as a mention of that agent", async () => {
    const role = fake.bot('code-bot').roleId;
    const sent = fake.humanSays('general', 'alice', `<@&${role}> can you look?`);
    await sink.until(() => sink.inbound.some((event) => event.messageId === sent.id));
    expect(fake.world.roleMentionsIn(sent.content)).toEqual([role]);
    expect(sink.inbound.find((event) => event.messageId === sent.id)?.text).toBe('@code can you look?');
  });

  it('hands over attachments as files, fetched from Discord only', async () => {
    const sent = fake.humanSays('general', 'alice', 'two files', {
      attachments: [
        { filename: 'a.csv', contentType: 'text/csv', content: 'a,b\n' },
        { filename: 'b.csv', contentType: 'text/csv', content: 'c,d\n', url: 'https://files.example.com/b.csv' },
      ],
    });
    await sink.until(() => sink.inbound.some((event) => event.messageId === sent.id));
    const files = sink.inbound.find((event) => event.messageId === sent.id)?.files ?? [];
    expect(files.map(({ name, mimeType, size }) => ({ name, mimeType, size }))).toEqual([
      { name: 'a.csv', mimeType: 'text/csv', size: 4 },
      { name: 'b.csv', mimeType: 'text/csv', size: 4 },
    ]);
    expect(new TextDecoder().decode(await files[0]?.download())).toBe('a,b\n');
    await expect(files[1]?.download()).rejects.toThrow(/fetched from the platform only, not files\.example\.com/);
  });

  it("makes a DM the agent's private room", async () => {
    const sent = fake.dm('carol', 'code-bot', 'secret question');
    await sink.until(() => sink.inbound.some((event) => event.messageId === sent.id));
    const event = sink.inbound.find((candidate) => candidate.messageId === sent.id);
    expect(event?.direct).toEqual({ agent: 'code' });
    expect(event?.channel).toBe(sent.channelId);
    const posted = await adapter.post({ channel: sent.channelId, agent: 'code', text: 'secret answer' });
    expect(fake.world.message(posted.messageIds[0] ?? '')?.authorId).toBe(fake.bot('code-bot').id);
    // The bridge's own note in a DM goes through the DM's bot, the only one that can post there.
    const note = await adapter.post({ channel: sent.channelId, agent: null, text: 'system note' });
    expect(fake.world.message(note.messageIds[0] ?? '')?.authorId).toBe(fake.bot('code-bot').id);
  });

  it("posts through the agent's own bot with real mentions and an enforced nonce", async () => {
    fake.humanSays('general', 'alice', 'hello'); // the adapter learns Alice_Smith
    await sink.until(() => sink.inbound.some((event) => event.text === 'hello'));
    const before = fake.requests.length;
    const posted = await adapter.post({
      channel: fake.channel('general').id,
      agent: 'data',
      text: '@alice_smith done; @code please review `@code`',
    });
    const message = fake.world.message(posted.messageIds[0] ?? '');
    expect(message?.authorId).toBe(fake.bot('data-bot').id);
    expect(message?.content).toBe(
      `<@${fake.human('alice').id}> done; <@${fake.bot('code-bot').id}> please review \`@code\``,
    );
    const request = fake.requests.slice(before).find((entry) => entry.method === 'POST');
    expect(request?.body).toMatchObject({ enforce_nonce: true, allowed_mentions: { parse: ['users'] } });
    expect(typeof (request?.body as { nonce?: unknown } | undefined)?.nonce).toBe('string');
  });

  it('posts system messages through the control bot and agents without a bot under their name', async () => {
    const system = await adapter.post({ channel: fake.channel('general').id, agent: null, text: 'hand-back' });
    expect(fake.world.message(system.messageIds[0] ?? '')?.authorId).toBe(fake.bot('code-bot').id);
    const plain = await adapter.post({ channel: fake.channel('general').id, agent: 'plain', text: 'hi' });
    expect(fake.world.message(plain.messageIds[0] ?? '')?.content).toBe('**plain:** hi');
  });

  it('splits a long reply into several messages and returns every id', async () => {
    const text = Array.from({ length: 200 }, (_, i) => `line ${i} ${'-'.repeat(20)}`).join('\n');
    const posted = await adapter.post({ channel: fake.channel('dev').id, agent: 'reviewer', text });
    expect(posted.messageIds.length).toBeGreaterThan(1);
    const contents = posted.messageIds.map((id) => fake.world.message(id)?.content ?? '');
    expect(contents.every((content) => content.length <= 2000)).toBe(true);
    expect(contents.join('\n')).toBe(text);
  });

  it('waits out a 429 and posts once', async () => {
    fake.rateLimit({ method: 'POST', path: '/messages', count: 2, retryAfterMs: 20 });
    const posted = await adapter.post({ channel: fake.channel('dev').id, agent: 'data', text: 'after 429' });
    expect(posted.messageIds).toHaveLength(1);
    expect(fake.messages('dev').filter((message) => message.content === 'after 429')).toHaveLength(1);
  });

  it('posts once when a response is lost and the request retried, thanks to the nonce', async () => {
    fake.loseResponses(1);
    const before = fake.requests.length;
    const posted = await adapter.post({ channel: fake.channel('dev').id, agent: 'data', text: 'exactly once' });
    const attempts = fake.requests.slice(before).filter((entry) => entry.method === 'POST');
    expect(attempts).toHaveLength(2);
    const nonces = attempts.map((entry) => (entry.body as { nonce?: string }).nonce);
    expect(nonces[0]).toEqual(expect.any(String));
    expect(nonces[1]).toBe(nonces[0]);
    const copies = fake.messages('dev').filter((message) => message.content === 'exactly once');
    expect(copies).toHaveLength(1);
    expect(posted.messageIds).toEqual([copies[0]?.id]);
  });

  it("shows typing through the agent's bot", async () => {
    const before = fake.requests.length;
    await adapter.typing?.(fake.channel('dev').id, 'reviewer');
    const typing = fake.requests.slice(before).find((entry) => entry.path.endsWith('/typing'));
    expect(typing?.botId).toBe(fake.bot('reviewer-bot').id);
  });

  it('answers slash commands ephemerally and tells the bridge who is an operator', async () => {
    const byOperator = await fake.slash('code-bot', 'alice', 'general', 'pass', { agent: 'data' });
    expect(byOperator).toEqual({ content: 'pass data operator=true', ephemeral: true, deferred: false });
    const byManager = await fake.slash('code-bot', 'bob', 'general', 'status');
    expect(byManager.content).toBe('status  operator=true');
    const byOther = await fake.slash('code-bot', 'carol', 'general', 'reset');
    expect(byOther).toMatchObject({ content: 'reset  operator=false', ephemeral: true });
    expect(sink.commands.map((event) => event.channel)).toEqual(Array(3).fill(fake.channel('general').id));
  });

  it('takes the room of a slash command from channel_id when the interaction has no channel object', async () => {
    const answer = await fake.slash('code-bot', 'alice', 'dev', 'status', {}, { channelObject: false });
    expect(answer).toMatchObject({ content: 'status  operator=true', ephemeral: true });
    expect(sink.commands.map((event) => event.channel)).toEqual([fake.channel('dev').id]);
    const nowhere = await fake.slash(
      'code-bot',
      'alice',
      'dev',
      'status',
      {},
      { channelObject: false, channelId: false },
    );
    expect(nowhere).toMatchObject({ content: NO_ROOM, ephemeral: true });
    expect(sink.commands).toHaveLength(1);
  });

  it('gives the bridge the interaction id, and leaves an interaction another bridge claimed unanswered', async () => {
    const callbacks = () => fake.requests.filter((entry) => entry.path.endsWith('/callback')).length;
    const before = callbacks();
    sink.claimedElsewhere = true;
    void fake.slash('code-bot', 'alice', 'general', 'status');
    await until(() => sink.commands.length === 1);
    sink.claimedElsewhere = false;
    const answered = await fake.slash('code-bot', 'alice', 'general', 'status');
    expect(answered.content).toBe('status  operator=true');
    const [claimed, next] = sink.commands;
    expect(claimed?.id).toMatch(/^\d+$/);
    expect(next?.id).toMatch(/^\d+$/);
    expect(claimed?.id).not.toBe(next?.id);
    expect(callbacks() - before).toBe(1);
  });

  it('fetches what was posted while every bot was disconnected, once', async () => {
    const last = fake.humanSays('dev', 'carol', 'before the drop');
    await sink.until(() => sink.inbound.some((event) => event.messageId === last.id));
    for (const bot of ['data-bot', 'code-bot', 'reviewer-bot']) fake.dropGateway(bot, { resumable: false });
    const missed = [fake.humanSays('dev', 'carol', 'missed 1'), fake.humanSays('dev', 'alice', 'missed 2')];
    await sink.until(() => missed.every((message) => sink.inbound.some((event) => event.messageId === message.id)));
    await Promise.all(['data-bot', 'code-bot', 'reviewer-bot'].map((bot) => fake.connected(bot)));
    const after = fake.humanSays('dev', 'carol', 'after');
    await sink.until(() => sink.inbound.some((event) => event.messageId === after.id));
    const ids = sink.inbound.map((event) => event.messageId);
    expect(ids.filter((id) => id === missed[0]?.id)).toHaveLength(1);
    expect(ids.filter((id) => id === missed[1]?.id)).toHaveLength(1);
    expect(ids.indexOf(missed[0]?.id ?? '')).toBeLessThan(ids.indexOf(missed[1]?.id ?? ''));
  });
});

describe('Discord adapter start-up', () => {
  it('fails to start with a bad token, naming the agent file, and leaves nothing connected', async () => {
    const fake = await startFakeDiscord({ bots: [{ token: 'tok-good', name: 'good-bot' }] });
    try {
      const config = testConfig({
        agents: [
          { name: 'good', discord: { token: 'tok-good', control: true } },
          { name: 'bad', discord: { token: 'tok-wrong', control: false } },
        ],
        env: { DISCORD_API_URL: fake.apiURL },
      });
      const adapter = createDiscordAdapter({
        config,
        logger: silentLogger(),
        rest: { globalRequestsPerSecond: 10_000 },
      });
      await expect(adapter.start(new RecordingSink())).rejects.toThrow(
        /agents\/bad\.md: discord\.token_env: login failed/,
      );
      // The good bot had connected; stopping after the failure closed its session normally.
      expect(fake.identifies.map((entry) => entry.botId)).toEqual([fake.bot('good-bot').id]);
      await fake.until(() => !fake.gatewayConnected(fake.bot('good-bot')));
    } finally {
      await fake.close();
    }
  });
});

describe('Discord slash commands that take a while', () => {
  it('defers the answer ephemerally, then edits the reply in', async () => {
    const fake = await startFakeDiscord({ bots: [{ token: 'tok-data', name: 'data-bot' }] });
    let release: (text: string) => void = () => {};
    const sink = new RecordingSink();
    sink.command = (event) => {
      sink.commands.push(event);
      return new Promise<string>((resolve) => {
        release = resolve;
      });
    };
    const config = testConfig({
      agents: [{ name: 'data', discord: { token: 'tok-data', control: true } }],
      env: { DISCORD_API_URL: fake.apiURL },
    });
    const adapter = createDiscordAdapter({
      config,
      logger: silentLogger(),
      rest: { globalRequestsPerSecond: 10_000 },
      commandDeferMs: 0,
    });
    try {
      await adapter.start(sink);
      const reply = fake.slash('data-bot', 'alice', 'general', 'status');
      const deferred = () =>
        fake.requests.some(
          (entry) => entry.path.endsWith('/callback') && (entry.body as { type?: number })?.type === 5,
        );
      await fake.until(deferred);
      release('all quiet');
      expect(await reply).toEqual({ content: 'all quiet', ephemeral: true, deferred: true });
    } finally {
      await adapter.stop();
      await fake.close();
    }
  });
});

describe('Discord slash commands answered by another bridge', () => {
  it('answers a deferred interaction through its webhook from another bridge, the one that received it gone', async () => {
    const fake = await startFakeDiscord({ bots: [{ token: 'tok-data', name: 'data-bot' }] });
    const sink = new RecordingSink();
    sink.command = (event) => {
      sink.commands.push(event);
      return new Promise<string>(() => {}); // the bridge that received it dies while it waits
    };
    const config = testConfig({
      agents: [{ name: 'data', discord: { token: 'tok-data', control: true } }],
      env: { DISCORD_API_URL: fake.apiURL },
    });
    const options = { config, logger: silentLogger(), rest: { globalRequestsPerSecond: 10_000 }, commandDeferMs: 0 };
    const receiver = createDiscordAdapter(options);
    const other = createDiscordAdapter(options);
    try {
      await receiver.start(sink);
      // Every bridge's session of the bot receives the interaction: the other finds it claimed, and leaves it.
      const elsewhere = new RecordingSink();
      elsewhere.claimedElsewhere = true;
      await other.start(elsewhere);
      const reply = fake.slash('data-bot', 'alice', 'general', 'pass');
      await fake.until(() =>
        fake.requests.some(
          (entry) => entry.path.endsWith('/callback') && (entry.body as { type?: number })?.type === 5,
        ),
      );
      await receiver.stop();
      const route = sink.commands[0]?.reply;
      if (route === undefined) throw new Error('the command came with its reply route');
      await other.answerCommand?.(route, 'Control is with the humans.');
      expect(await reply).toEqual({ content: 'Control is with the humans.', ephemeral: true, deferred: true });
      // Once answered the interaction's reply is gone: a second answer fails with one short line, and no token.
      const again = other.answerCommand?.(route, 'twice');
      await expect(again).rejects.toThrow('the interaction could not be answered through its webhook (404)');
    } finally {
      await other.stop();
      await receiver.stop();
      await fake.close();
    }
  });
});

describe('Discord slash command answers longer than a message', () => {
  it('splits a long /status into the reply and ephemeral follow-ups, never cutting it', async () => {
    const fake = await startFakeDiscord({ bots: [{ token: 'tok-data', name: 'data-bot' }] });
    const long = Array.from(
      { length: 120 },
      (_, i) => `- @agent${i}: ${i * 1000} in (${i * 900} cached), ${i} out`,
    ).join('\n');
    expect(long.length).toBeGreaterThan(4000);
    const sink = new RecordingSink();
    sink.command = async () => long;
    const config = testConfig({
      agents: [{ name: 'data', discord: { token: 'tok-data', control: true } }],
      env: { DISCORD_API_URL: fake.apiURL },
    });
    const adapter = createDiscordAdapter({ config, logger: silentLogger(), rest: { globalRequestsPerSecond: 10_000 } });
    try {
      await adapter.start(sink);
      const reply = await fake.slash('data-bot', 'alice', 'general', 'status');
      await fake.until(() => fake.followUps.length >= 2);
      const parts = [reply.content, ...fake.followUps.map((f) => f.content)];
      expect(parts.every((part) => part.length <= 2000)).toBe(true);
      expect(fake.followUps.every((f) => f.ephemeral)).toBe(true);
      expect(parts.join('\n')).toBe(long);
    } finally {
      await adapter.stop();
      await fake.close();
    }
  });
});
