import { Client, Events, GatewayIntentBits, type Message, MessageFlags, Partials } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { until } from '../helpers/until.js';

function client(fake: FakeDiscord): Client {
  return new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.DirectMessages,
    ],
    partials: [Partials.Channel],
    rest: { api: fake.apiURL, globalRequestsPerSecond: 10_000 },
  });
}

async function login(fake: FakeDiscord, token: string): Promise<Client> {
  const bot = client(fake);
  const ready = new Promise<void>((resolve) => bot.once(Events.ClientReady, () => resolve()));
  await bot.login(token);
  await ready;
  return bot;
}

describe('fake Discord with the real discord.js', () => {
  let fake: FakeDiscord;
  let one: Client;
  let two: Client;
  const seen: { bot: string; message: Message }[] = [];

  beforeAll(async () => {
    fake = await startFakeDiscord({
      bots: [
        { token: 'tok-one', name: 'one' },
        { token: 'tok-two', name: 'two' },
      ],
      humans: [{ name: 'alice', nick: 'Alice B' }, { name: 'bob' }],
    });
    one = await login(fake, 'tok-one');
    two = await login(fake, 'tok-two');
    for (const [name, bot] of [
      ['one', one],
      ['two', two],
    ] as const) {
      bot.on(Events.MessageCreate, (message) => seen.push({ bot: name, message }));
    }
  });

  afterAll(async () => {
    await one?.destroy();
    await two?.destroy();
    await fake?.close();
  });

  it('logs bots in with their own identities and the guild with its channels', () => {
    expect(one.user?.username).toBe('one');
    expect(two.user?.id).toBe(fake.bot('two').id);
    expect(one.guilds.cache.get(fake.world.guildId)?.channels.cache.has(fake.channel('general').id)).toBe(true);
  });

  it('fans a channel message out to every bot, with mentions and the member', async () => {
    const start = seen.length;
    const sent = fake.humanSays('general', 'alice', `hi <@${fake.bot('two').id}>`);
    await waitFor(() => seen.length >= start + 2);
    const copies = seen.slice(start).filter((entry) => entry.message.id === sent.id);
    expect(copies.map((entry) => entry.bot).sort()).toEqual(['one', 'two']);
    const message = copies[0]?.message;
    expect(message?.content).toBe(`hi <@${fake.bot('two').id}>`);
    expect(message?.mentions.users.map((user) => user.id)).toEqual([fake.bot('two').id]);
    expect(message?.member?.displayName).toBe('Alice B');
    expect(message?.guildId).toBe(fake.world.guildId);
  });

  it('delivers a DM only to its bot', async () => {
    const start = seen.length;
    const sent = fake.dm('bob', 'one', 'psst');
    await waitFor(() => seen.some((entry) => entry.message.id === sent.id));
    const copies = seen.slice(start).filter((entry) => entry.message.id === sent.id);
    expect(copies.map((entry) => entry.bot)).toEqual(['one']);
    expect(copies[0]?.message.channel.isDMBased()).toBe(true);
  });

  it('returns the same message for a repeated nonce with enforce_nonce', async () => {
    const channel = fake.channel('general').id;
    const body = { content: 'once', nonce: 'n-123', enforce_nonce: true };
    const first = (await one.rest.post(`/channels/${channel}/messages`, { body })) as { id: string };
    const second = (await one.rest.post(`/channels/${channel}/messages`, { body })) as { id: string };
    expect(second.id).toBe(first.id);
    expect(fake.messages('general').filter((message) => message.content === 'once')).toHaveLength(1);
  });

  it('edits and deletes a bot message of its own, pinging only on create and as allowed_mentions says', async () => {
    const channel = fake.channel('general').id;
    const bob = fake.human('bob').id;
    const deleted = new Promise<string>((resolve) => two.once(Events.MessageDelete, (message) => resolve(message.id)));
    const quiet = (await one.rest.post(`/channels/${channel}/messages`, {
      body: { content: `draft for <@${bob}>`, allowed_mentions: { parse: [] } },
    })) as { id: string };
    const loud = (await one.rest.post(`/channels/${channel}/messages`, {
      body: { content: `hey <@${bob}>`, allowed_mentions: { parse: ['users'] } },
    })) as { id: string };
    expect(fake.world.message(quiet.id)?.pinged).toEqual([]);
    expect(fake.world.message(loud.id)?.pinged).toEqual([bob]);

    await one.rest.patch(`/channels/${channel}/messages/${quiet.id}`, { body: { content: 'final text' } });
    expect(fake.world.message(quiet.id)).toMatchObject({ content: 'final text', edits: ['final text'], pinged: [] });
    await expect(two.rest.delete(`/channels/${channel}/messages/${quiet.id}`)).rejects.toThrow(/Missing Permissions/);
    await one.rest.delete(`/channels/${channel}/messages/${quiet.id}`);
    expect(await deleted).toBe(quiet.id);
    expect(fake.world.message(quiet.id)).toBeUndefined();
    expect(fake.world.deleted.map((message) => message.id)).toEqual([quiet.id]);
  });

  it('refuses the next posts in a channel as Discord refuses a bot without Send Messages, and creates nothing', async () => {
    const channel = fake.channel('general').id;
    const before = fake.messages('general').length;
    fake.refusePosts('general', 1);
    await expect(one.rest.post(`/channels/${channel}/messages`, { body: { content: 'refused' } })).rejects.toThrow(
      /Missing Permissions/,
    );
    expect(fake.messages('general')).toHaveLength(before);
    await one.rest.post(`/channels/${channel}/messages`, { body: { content: 'allowed again' } });
    fake.refusePosts('general', 2);
    fake.refusePosts('general', 0);
    await one.rest.post(`/channels/${channel}/messages`, { body: { content: 'refusals ended' } });
    expect(
      fake
        .messages('general')
        .slice(before)
        .map((message) => message.content),
    ).toEqual(['allowed again', 'refusals ended']);
  });

  it('answers GET messages?after= with what came later', async () => {
    const channel = fake.channel('general');
    const marker = fake.humanSays(channel, 'bob', 'marker');
    fake.humanSays(channel, 'bob', 'later 1');
    fake.humanSays(channel, 'bob', 'later 2');
    const later = (await one.rest.get(`/channels/${channel.id}/messages`, {
      query: new URLSearchParams({ after: marker.id, limit: '100' }),
    })) as { content: string }[];
    expect(later.map((message) => message.content).sort()).toEqual(['later 1', 'later 2']);
  });

  it("sends a forward as Discord does: a FORWARD reference and a snapshot of the original's text, files and embeds", async () => {
    const channel = fake.channel('general');
    const embed = { type: 'rich', title: 'Build failed' };
    const original = fake.humanSays(channel, 'bob', 'see attached', {
      attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: 'x' }],
      embeds: [embed],
    });
    const forward = fake.forward(channel, 'alice', original);
    const fetched = (await one.rest.get(`/channels/${channel.id}/messages`, {
      query: new URLSearchParams({ after: original.id, limit: '100' }),
    })) as Array<{ id: string; content: string; flags: number; message_snapshots?: Array<{ message: unknown }> }>;
    const json = fetched.find((message) => message.id === forward.id);
    expect(json).toMatchObject({
      content: '',
      flags: MessageFlags.HasSnapshot,
      message_reference: { type: 1, message_id: original.id },
    });
    expect(json?.message_snapshots?.[0]?.message).toMatchObject({
      content: 'see attached',
      attachments: [{ filename: 'a.txt', url: original.attachments[0]?.url }],
      embeds: [embed],
    });
    // discord.js reads the snapshot as a message: its files and embeds too.
    await until(() => seen.some((entry) => entry.message.id === forward.id));
    const snapshot = seen.find((entry) => entry.message.id === forward.id)?.message.messageSnapshots.first();
    expect(snapshot?.attachments.first()?.name).toBe('a.txt');
    expect(snapshot?.embeds[0]?.title).toBe('Build failed');
  });

  it('makes discord.js wait out an injected 429 and then succeed', async () => {
    fake.rateLimit({ method: 'POST', path: '/messages', count: 1, retryAfterMs: 30 });
    const before = fake.requests.length;
    const channel = fake.channel('general').id;
    await one.rest.post(`/channels/${channel}/messages`, { body: { content: 'after the limit' } });
    const posts = fake.requests.slice(before).filter((request) => request.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(fake.messages('general').filter((message) => message.content === 'after the limit')).toHaveLength(1);
  });

  it('carries a slash command to the bot and its ephemeral reply back', async () => {
    one.once(Events.InteractionCreate, (interaction) => {
      if (interaction.isChatInputCommand()) {
        void interaction.reply({
          content: `got ${interaction.commandName} ${interaction.options.getString('agent') ?? ''}`,
          flags: MessageFlags.Ephemeral,
        });
      }
    });
    const reply = await fake.slash('one', 'alice', 'general', 'pass', { agent: 'two' });
    expect(reply).toEqual({ content: 'got pass two', ephemeral: true, deferred: false });
  });

  it("keeps a message's buttons, refuses invalid ones, and sends a click to the message's bot as Discord does", async () => {
    const channel = fake.channel('general').id;
    const row = (custom_id: string, label = 'Approve A1') => ({
      type: 1,
      components: [{ type: 2, style: 3, label, custom_id }],
    });
    await expect(
      one.rest.post(`/channels/${channel}/messages`, { body: { content: 'x', components: [row('a'.repeat(101))] } }),
    ).rejects.toThrow(/Invalid Form Body/);
    await expect(
      one.rest.post(`/channels/${channel}/messages`, {
        body: {
          content: 'x',
          components: [{ type: 1, components: [...row('same').components, ...row('same').components] }],
        },
      }),
    ).rejects.toThrow(/Invalid Form Body/);
    const posted = (await one.rest.post(`/channels/${channel}/messages`, {
      body: { content: 'Approve?', components: [row('rt:approve:A1')] },
    })) as { id: string; components: unknown[] };
    expect(posted.components).toEqual([row('rt:approve:A1')]);
    const message = fake.world.message(posted.id);
    if (!message) throw new Error('not kept');
    expect(() => fake.click('two', 'bob', message, 'rt:approve:A1')).toThrow(/has no button/);
    expect(() => fake.click('one', 'bob', message, 'rt:deny:A1')).toThrow(/has no button/);
    one.once(Events.InteractionCreate, (interaction) => {
      if (!interaction.isButton()) return;
      const seenBy = `${interaction.customId} by ${interaction.user.username} on ${interaction.message.id} in ${interaction.channelId}`;
      void interaction.reply({ content: seenBy, flags: MessageFlags.Ephemeral });
    });
    const reply = await fake.click('one', 'bob', message, 'rt:approve:A1');
    expect(reply).toEqual({
      content: `rt:approve:A1 by bob on ${posted.id} in ${channel}`,
      ephemeral: true,
      deferred: false,
    });
  });

  it('resumes a dropped gateway and replays what was sent meanwhile', async () => {
    const resumed = new Promise<void>((resolve) => one.once(Events.ShardResume, () => resolve()));
    fake.dropGateway('one');
    const sent = fake.humanSays('general', 'alice', 'while one was away');
    await resumed;
    await waitFor(() => seen.some((entry) => entry.bot === 'one' && entry.message.id === sent.id));
    expect(
      fake.identifies.filter((entry) => entry.op === 'identify' && entry.botId === fake.bot('one').id),
    ).toHaveLength(1);
  });

  it('makes the client identify afresh when a resume is refused', async () => {
    const ready = new Promise<void>((resolve) => two.once(Events.ShardReady, () => resolve()));
    fake.dropGateway('two', { resumable: false });
    await ready;
    expect(
      fake.identifies.filter((entry) => entry.op === 'identify' && entry.botId === fake.bot('two').id),
    ).toHaveLength(2);
  });
});

describe('fake Discord on a clock of its own', () => {
  it('dates messages, their ids and edits by its clock, an edit at the time it is said to be made', async () => {
    const clock = { now: 1_900_000_000_000 };
    const fake = await startFakeDiscord({ bots: [{ token: 'tok-one', name: 'one' }], clock: () => clock.now });
    const bot = await login(fake, 'tok-one');
    try {
      const edits: Array<{ id: string; edited: string }> = [];
      bot.on(Events.Raw, (packet: { t?: string; d?: { id: string; edited_timestamp: string } }) => {
        if (packet.t === 'MESSAGE_UPDATE' && packet.d)
          edits.push({ id: packet.d.id, edited: packet.d.edited_timestamp });
      });
      const seen = new Promise<Message>((resolve) => bot.once(Events.MessageCreate, resolve));
      const said = fake.humanSays('general', 'alice', 'at the hour');
      expect((await seen).createdTimestamp).toBe(clock.now);
      expect(said.createdAt).toBe(clock.now);
      fake.humanEdits(said, 'long after', { at: clock.now + 300_000 });
      await waitFor(() => edits.length === 1);
      expect(edits).toEqual([{ id: said.id, edited: new Date(clock.now + 300_000).toISOString() }]);
    } finally {
      await bot.destroy();
      await fake.close();
    }
  });
});

/** Waits for a condition driven by gateway events (bounded by the test timeout). */
async function waitFor(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5));
}
