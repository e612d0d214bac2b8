/**
 * The Discord adapter: every agent with a Discord token is its own bot (one discord.js Client each). Messages
 * arrive through whichever bots see them and are forwarded once; replies leave through the speaking agent's bot.
 */
import { type APIMessage, type Client, Events, type Guild, type Message, Routes, Status } from 'discord.js';
import type { AgentConfig, Config } from '../../src/config/index.js';
import { AdapterError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted, PostOptions, StreamingPost } from '../../src/ports.js';
import { CatchUpHold } from '../shared/catch-up-hold.js';
import { ReplyPoster } from '../shared/reply-posting.js';
import { SeenIds } from '../shared/seen-ids.js';
import { splitMessage } from '../shared/split.js';
import { type StreamClock, systemClock } from '../shared/streaming-post.js';
import { attachmentFile } from './attachments.js';
import { type ButtonContext, componentsOf, listenForClicks } from './buttons.js';
import { CatchUpRooms, fetchMissed } from './catch-up.js';
import * as kit from './client.js';
import { answerByRoute, answerCommand, SentChannels } from './commands.js';
import {
  DISCORD_MESSAGE_LIMIT,
  editId,
  factsFromApi,
  factsFromMessage,
  factsFromUpdate,
  type MessageFacts,
  PLATFORM,
  toInbound,
} from './inbound.js';
import { Directory, namesToMentions } from './mentions.js';
import { discordTarget, postRetryable } from './posting.js';
import { ALLOWED_MENTIONS, DiscordStreams } from './streaming.js';

export interface DiscordAdapterOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Extra REST options for every client (tests: a high `globalRequestsPerSecond` against the fake). */
  readonly rest?: kit.ClientSettings['rest'];
  /** Milliseconds before a slow slash command is deferred (default 2000; Discord allows 3000). */
  readonly commandDeferMs?: number;
  /** Least milliseconds between two changes of a streamed reply (default 1000: one edit a second). */
  readonly streamIntervalMs?: number;
  /** The clock streamed replies are throttled by (tests). */
  readonly streamClock?: StreamClock;
}

interface Identity {
  readonly agent: AgentConfig;
  readonly token: string;
  readonly client: Client;
}

/** Discord's length limit for a message's content. */
export { DISCORD_MESSAGE_LIMIT };

/** The control identity: `control: true` in an agent's file, else the first agent with a Discord token. */
export function controlAgentOf(config: Config): AgentConfig | undefined {
  const withDiscord = config.agents.filter((agent) => agent.discord);
  return withDiscord.find((agent) => agent.discord?.control) ?? withDiscord[0];
}

export class DiscordAdapter implements ChatAdapter {
  readonly platform = PLATFORM;
  private readonly identities: Identity[] = [];
  private readonly directory = new Directory();
  private readonly seen = new SeenIds();
  /** DM channel → the agent whose private room it is. */
  private readonly dmOwner = new Map<string, string>();
  /** Where each room's catch-up starts. */
  private readonly catchUps: CatchUpRooms;
  /**
   * Live messages wait while their room catches up, and every message waits while the adapter starts (before
   * every identity is known, messages cannot be told apart).
   */
  private readonly hold: CatchUpHold;
  /** Until start() is done: edits are not read yet, and a gateway READY needs no catch-up of its own. */
  private starting = true;
  private readonly poster: ReplyPoster;
  private readonly streams: DiscordStreams;
  private readonly allowedBots: ReadonlySet<string>;
  private readonly operators: ReadonlySet<string>;
  private sink: AdapterSink | undefined;
  /** What a click on a card's button needs. */
  private readonly clicks: ButtonContext;
  /** Interactions' `channel_id` as sent, for interactions without a `channel` object. */
  private readonly interactionChannels = new SentChannels();
  /**
   * DISCORD_STREAM=edit: the reply is shown through the agent's identity while it is written. Absent otherwise,
   * so the bridge does not ask the model to stream for nothing.
   */
  readonly stream?: (channel: string, agent: string) => StreamingPost | undefined;

  constructor(private readonly options: DiscordAdapterOptions) {
    const { settings } = options.config;
    this.allowedBots = new Set(settings.DISCORD_ALLOWED_BOTS);
    this.operators = new Set(settings.OPERATORS);
    this.clicks = { sink: () => this.sink, operators: this.operators, deferMs: options.commandDeferMs, log: this.log };
    if (settings.DISCORD_STREAM === 'edit') this.stream = (channel, agent) => this.openStream(channel, agent);
    this.catchUps = new CatchUpRooms({ sink: () => this.sink, max: settings.CATCHUP_MAX, log: this.log });
    this.hold = new CatchUpHold({ log: this.log });
    this.poster = new ReplyPoster({ log: this.log, maxPosts: settings.MAX_REPLY_POSTS });
    this.streams = new DiscordStreams({
      poster: this.poster,
      intervalMs: options.streamIntervalMs ?? 1000,
      clock: options.streamClock ?? systemClock,
      log: this.log,
    });
  }

  private get log(): Logger {
    return this.options.logger;
  }

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    this.starting = true;
    const { settings } = this.options.config;
    const control = controlAgentOf(this.options.config);
    for (const agent of this.options.config.agents) {
      if (!agent.discord) continue;
      const client = kit.createClient({ api: settings.DISCORD_API_URL, rest: this.options.rest });
      const identity: Identity = { agent, token: agent.discord.token, client };
      this.identities.push(identity);
      this.wire(identity, identity.agent === control);
    }
    await this.hold.everyRoom(async () => {
      // Every login settles before a failure tears the others down: no client is destroyed mid-handshake.
      const logins = await Promise.allSettled(this.identities.map((identity) => this.login(identity)));
      const failed = logins.find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) {
        await this.stop();
        throw failed.reason;
      }
      // DMs the store knows (from before a restart) are caught up too.
      for (const room of sink.directRooms?.(PLATFORM) ?? []) {
        if (this.identityOf(room.agent)) this.dmOwner.set(room.channel, room.agent);
      }
      // Whatever was said while the bridge was down: one pass over the rooms the store knows, from where each was
      // complete before this start. Messages that arrived since wait until then (the history stays in order).
      await Promise.all(this.identities.map((identity) => this.catchUp(identity)));
      this.starting = false;
    });
  }

  /** Every bot's gateway session is up (discord.js reconnects on its own; meanwhile this is false). */
  connected(): boolean {
    // The client's own status stays Ready through a reconnect; its shards' status does not.
    const live = (client: Identity['client']) =>
      client.isReady() && client.ws.shards.size > 0 && client.ws.shards.every((shard) => shard.status === Status.Ready);
    return this.identities.length > 0 && this.identities.every((identity) => live(identity.client));
  }

  async stop(): Promise<void> {
    this.catchUps.stop();
    const identities = this.identities.splice(0);
    this.streams.abandonAll();
    await Promise.allSettled(identities.map((identity) => identity.client.destroy()));
    this.sink = undefined;
  }

  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    const { identity, prefix } = this.speaker(message);
    const text = namesToMentions(prefix + message.text, this.directory);
    const target = discordTarget(identity.client, message.channel, ALLOWED_MENTIONS, componentsOf(message.buttons));
    const { ids, error } = await this.poster.reply(target, text, prefix + message.text, options);
    // A reply cut short by a refusal is posted as far as it went (the log says where it stopped); one cut short by a
    // failure that passes is tried again (the chunks already posted are found by their nonces, not posted twice).
    const retryable = error !== undefined && postRetryable(error);
    if (error !== undefined && (ids.length === 0 || retryable)) {
      throw new AdapterError(PLATFORM, `${identity.agent.name} could not post: ${describeError(error)}`, {
        cause: error,
        retryable,
      });
    }
    return { messageIds: ids };
  }

  private openStream(channel: string, agent: string): StreamingPost | undefined {
    if (this.identities.length === 0) return undefined;
    const { identity, prefix } = this.speaker({ channel, agent, text: '' });
    return this.streams.start({
      client: identity.client,
      channel,
      bot: identity.client.user?.id ?? identity.agent.name,
      render: (text) => splitMessage(namesToMentions(prefix + text, this.directory), DISCORD_MESSAGE_LIMIT),
      postWhole: (text) => this.post({ channel, agent, text }),
    });
  }

  /** The DM channel between an agent's bot and a human the adapter has seen (by their `@name`). */
  async openDirect(agent: string, user: string): Promise<string | undefined> {
    const identity = this.identityOf(agent);
    const userId = this.directory.humanId(user.replace(/^@/, ''));
    if (!identity || !userId) return undefined;
    const body = { recipient_id: userId };
    const channel = (await identity.client.rest.post(Routes.userChannels(), { body })) as { id: string };
    this.dmOwner.set(channel.id, identity.agent.name);
    return channel.id;
  }

  /** Answers a command another bridge received and deferred, through the interaction's webhook (see answerByRoute). */
  async answerCommand(reply: string, text: string): Promise<void> {
    const identity = this.identities[0];
    if (!identity) throw new AdapterError(PLATFORM, 'no Discord bot is connected');
    await answerByRoute(identity.client.rest, reply, text);
  }

  /** `#name`, a name, `<#id>` or an id of a text channel the bots can see. */
  readonly resolveChannel = async (reference: string) => kit.findTextChannel(this.clients(), reference);

  /** A member who can view and write in the channel could post there (an agent acting for them may too). */
  readonly mayPost = (channel: string, userId: string) => kit.memberMayPost(this.clients(), channel, userId);
  readonly mayDirect = (userId: string, to: string) =>
    kit.shareServer(this.clients(), userId, this.directory.humanId(to.replace(/^@/, '')));

  private readonly clients = (): Client[] => this.identities.map((identity) => identity.client);

  /** An answered approval card loses its buttons and says how it ended (the bot that posted it edits it). */
  async closeCard(channel: string, messageId: string, text: string): Promise<void> {
    const { identity } = this.speaker({ channel, agent: null, text });
    const content = namesToMentions(text, this.directory).slice(0, DISCORD_MESSAGE_LIMIT);
    await identity.client.rest.patch(Routes.channelMessage(channel, messageId), { body: { content, components: [] } });
  }

  async typing(channel: string, agent: string): Promise<void> {
    const identity = this.identityOf(agent) ?? this.speaker({ channel, agent: null, text: '' }).identity;
    await identity.client.rest.post(Routes.channelTyping(channel));
  }

  /** Which bot posts: the agent's own; the bridge's messages go through the control bot (or the DM's bot). */
  private speaker(message: Outbound): { identity: Identity; prefix: string } {
    const own = message.agent ? this.identityOf(message.agent) : undefined;
    if (own) return { identity: own, prefix: '' };
    const dmAgent = this.dmOwner.get(message.channel);
    const identity =
      (dmAgent ? this.identityOf(dmAgent) : undefined) ??
      this.identityOf(controlAgentOf(this.options.config)?.name ?? '') ??
      this.identities[0];
    if (!identity) throw new AdapterError(PLATFORM, 'no Discord identity is connected');
    // An agent without its own bot still speaks, under its name, through the control bot.
    return { identity, prefix: message.agent ? `**${message.agent}:** ` : '' };
  }

  /** Every bot's managed role (`tags.bot_id`): a mention of it addresses that bot. */
  private learnRoles(guild: Guild): void {
    for (const role of guild.roles.cache.values()) this.directory.setRole(role.id, role.tags?.botId);
  }

  private identityOf(agent: string): Identity | undefined {
    const key = agent.toLowerCase();
    return this.identities.find((identity) => identity.agent.name.toLowerCase() === key);
  }

  private wire(identity: Identity, isControl: boolean): void {
    const { client, agent } = identity;
    client.on(Events.MessageCreate, (message) => this.onMessage(identity, message));
    // Messages are not cached, so discord.js emits no MessageUpdate: the raw event carries the whole message.
    client.on(Events.Raw, (packet: { t?: string; d?: unknown }) => {
      if (packet.t === 'MESSAGE_UPDATE' && !this.starting) this.onUpdate(identity, packet.d);
    });
    client.on(Events.Error, (error) => this.log.error({ err: error, agent: agent.name }, 'discord client error'));
    client.on(Events.ShardError, (error) => this.log.warn({ err: error, agent: agent.name }, 'discord gateway error'));
    client.on(Events.ShardResume, () => void this.catchUp(identity));
    // Until the next catch-up, this bot's rooms may miss messages: they are not marked complete meanwhile.
    for (const event of [Events.ShardDisconnect, Events.ShardReconnecting, Events.Invalidated] as const) {
      client.on(event, () => this.catchUps.dropped(this.roomsOf(identity).map((room) => room.id)));
    }
    // A bot's managed role appears when the bot joins a server (and with every guild the client learns of).
    client.on(Events.GuildCreate, (guild) => this.learnRoles(guild));
    client.on(Events.GuildRoleCreate, (role) => this.directory.setRole(role.id, role.tags?.botId));
    client.on(Events.GuildRoleUpdate, (_old, role) => this.directory.setRole(role.id, role.tags?.botId));
    client.on(Events.GuildRoleDelete, (role) => this.directory.forgetRole(role.id));
    client.on(Events.ShardReady, () => {
      // The first READY is covered by start(); a later one follows a session Discord would not resume.
      if (!this.starting) void this.catchUp(identity);
    });
    listenForClicks(client, agent.name, this.clicks);
    if (isControl) {
      client.on(Events.Raw, (packet) => this.interactionChannels.note(packet));
      client.on(Events.InteractionCreate, (interaction) => {
        if (!interaction.isChatInputCommand() || !this.sink) return;
        const context = {
          sink: this.sink,
          operators: this.operators,
          controlAgent: agent.name,
          deferAfterMs: this.options.commandDeferMs,
          sentChannel: (id: string) => this.interactionChannels.take(id),
        };
        answerCommand(interaction, context).catch((error: unknown) =>
          this.log.warn({ err: error, command: interaction.commandName }, 'slash command failed'),
        );
      });
    }
  }

  private async login(identity: Identity): Promise<void> {
    const { client, agent } = identity;
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    try {
      await client.login(identity.token);
    } catch (error) {
      throw new AdapterError(PLATFORM, `${agent.file}: discord.token_env: login failed: ${describeError(error)}`, {
        cause: error,
      });
    }
    await ready;
    if (client.user) this.directory.setAgent(agent.name, client.user.id);
    for (const guild of client.guilds.cache.values()) this.learnRoles(guild);
    this.log.info({ agent: agent.name, user: client.user?.tag }, 'discord identity ready');
  }

  private onMessage(identity: Identity, message: Message): void {
    this.live(factsFromMessage(message), identity.agent.name);
  }

  private onUpdate(identity: Identity, data: unknown): void {
    const facts = factsFromUpdate(data as Parameters<typeof factsFromUpdate>[0]);
    if (facts) this.live(facts, identity.agent.name);
  }

  /** A live message (or edit) waits while its room catches up, else it goes on at once. */
  private live(facts: MessageFacts, receiver: string): void {
    const forward = () => this.forward(facts, receiver);
    if (!this.hold.hold(facts.channelId, forward)) void forward();
  }

  /**
   * Hands one message (or edit) to the bridge, once, whichever bots received it. A fetched one (`missed`) is
   * answered once the room's catch-up is done.
   */
  private async forward(facts: MessageFacts, receiver: string, missed = false): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    if (!this.seen.add(editId(facts))) return;
    // Only the DM's own bot receives a DM, so the receiver is the agent whose private room it is.
    if (facts.isDirect) this.dmOwner.set(facts.channelId, receiver);
    const inbound = toInbound(facts, {
      directory: this.directory,
      allowedBots: this.allowedBots,
      receiver,
      channelName: (id) => kit.channelName(this.clients(), id),
      roleName: (id) => kit.roleName(this.clients(), id),
      rolesOf: (id) => kit.cachedRoles(this.clients(), id),
      fileOf: (attachment) =>
        attachmentFile(attachment, {
          apiUrl: this.options.config.settings.DISCORD_API_URL,
          maxBytes: this.options.config.settings.DISCORD_MAX_FILE_MB * 1024 * 1024,
        }),
    });
    // The room's next catch-up starts after it once the bridge has it (stored, or held while its store cannot write).
    const forwarded = () => {
      if (!missed && facts.editedAt === undefined) this.catchUps.forwarded(facts.channelId, facts.id);
    };
    if (!inbound || !(await this.streams.settled(facts.channelId, facts.authorId, facts.id))) {
      forwarded();
      return;
    }
    try {
      await sink.receive(missed ? { ...inbound, missed } : inbound);
    } catch (error) {
      this.log.error({ err: error, channel: facts.channelId, id: facts.id }, 'bridge refused a discord message');
    }
    forwarded();
  }

  /** The rooms a bot sees: the guild's text channels, and the DMs that are its own. */
  private roomsOf(identity: Identity): { id: string; direct: boolean }[] {
    const rooms = kit.textChannels(identity.client).map((channel) => ({ id: channel.id, direct: false }));
    for (const [id, owner] of this.dmOwner) if (owner === identity.agent.name) rooms.push({ id, direct: true });
    return rooms;
  }

  /**
   * Fetches and forwards, oldest first, what each of this bot's rooms received since it was last complete. Live
   * messages wait while a room is read (Discord reads fast: the history stays in order); a room whose history could
   * not be read is read again in the background (CatchUpRooms), live messages no longer held.
   */
  private async catchUp(identity: Identity): Promise<void> {
    for (const room of this.roomsOf(identity)) {
      await this.hold.room(room.id, () =>
        this.catchUps.room(
          room.id,
          (after, max) => fetchMissed(identity.client, room.id, after, max),
          (message: APIMessage) => this.forward(factsFromApi(message, room.direct), identity.agent.name, true),
        ),
      );
    }
  }
}
