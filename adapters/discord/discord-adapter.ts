/**
 * The Discord adapter: every agent with a Discord token is its own bot (one discord.js Client each). Messages
 * arrive through whichever bots see them and are forwarded once; replies leave through the speaking agent's bot.
 */
import {
  type APIMessage,
  ChannelType,
  type Client,
  Events,
  type Guild,
  type Message,
  Routes,
  Status,
} from 'discord.js';
import type { AgentConfig, Config } from '../../src/config/index.js';
import { AdapterError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted, PostOptions, StreamingPost } from '../../src/ports.js';
import { SeenIds } from '../shared/seen-ids.js';
import { splitMessage } from '../shared/split.js';
import { EditStream, type StreamClock, systemClock } from '../shared/streaming-post.js';
import { attachmentFile } from './attachments.js';
import { CatchUpRooms, fetchMissed } from './catch-up.js';
import { type ClientSettings, createClient } from './client.js';
import { answerCommand, SentChannels } from './commands.js';
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
import { DiscordPosting } from './posting.js';

export interface DiscordAdapterOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Extra REST options for every client (tests: a high `globalRequestsPerSecond` against the fake). */
  readonly rest?: ClientSettings['rest'];
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

/** Mentions only users named in the text: never @everyone, roles, or the author of a replied-to message. */
const ALLOWED_MENTIONS = { parse: ['users'], replied_user: false };
/** A reply still being written pings no one (edits never ping, so a mention would ping a partial text). */
const NO_MENTIONS = { parse: [] };

/** Discord's length limit for a message's content. */
export { DISCORD_MESSAGE_LIMIT };

/** A user or bot mention, which pings only when the message is created. */
const USER_MENTION = /<@!?\d+>/;

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
  /** Where each room's catch-up starts, and the live messages waiting while it runs. */
  private readonly catchUps: CatchUpRooms;
  private readonly posting: DiscordPosting;
  private readonly allowedBots: ReadonlySet<string>;
  private readonly operators: ReadonlySet<string>;
  /** Messages that arrived before every identity was known (they could not be told apart yet). */
  private pending: { facts: MessageFacts; receiver: string }[] | null = [];
  /** `channel:bot user id` → replies that bot is streaming there; its messages' echoes wait for them. */
  private readonly streams = new Map<string, Set<EditStream>>();
  private sink: AdapterSink | undefined;
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
    if (settings.DISCORD_STREAM === 'edit') this.stream = (channel, agent) => this.openStream(channel, agent);
    this.catchUps = new CatchUpRooms({ sink: () => this.sink, max: settings.CATCHUP_MAX, log: this.log });
    this.posting = new DiscordPosting({ log: this.log, maxPosts: settings.MAX_REPLY_POSTS });
  }

  private get log(): Logger {
    return this.options.logger;
  }

  async start(sink: AdapterSink): Promise<void> {
    this.sink = sink;
    this.pending = [];
    const { settings } = this.options.config;
    const control = controlAgentOf(this.options.config);
    for (const agent of this.options.config.agents) {
      if (!agent.discord) continue;
      const client = createClient({ api: settings.DISCORD_API_URL, rest: this.options.rest });
      const identity: Identity = { agent, token: agent.discord.token, client };
      this.identities.push(identity);
      this.wire(identity, identity.agent === control);
    }
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
    const early = this.pending ?? [];
    this.pending = null;
    for (const item of early) await this.forward(item.facts, item.receiver);
  }

  /** Every bot's gateway session is up (discord.js reconnects on its own; meanwhile this is false). */
  connected(): boolean {
    // The client's own status stays Ready through a reconnect; its shards' status does not.
    const live = (client: Identity['client']) =>
      client.isReady() && client.ws.shards.size > 0 && client.ws.shards.every((shard) => shard.status === Status.Ready);
    return this.identities.length > 0 && this.identities.every((identity) => live(identity.client));
  }

  async stop(): Promise<void> {
    this.catchUps.flush();
    const identities = this.identities.splice(0);
    for (const open of this.streams.values()) for (const stream of open) stream.abandon();
    await Promise.allSettled(identities.map((identity) => identity.client.destroy()));
    this.sink = undefined;
  }

  async post(message: Outbound, options: PostOptions = {}): Promise<Posted> {
    const { identity, prefix } = this.speaker(message);
    const text = namesToMentions(prefix + message.text, this.directory);
    const chunks = splitMessage(text, DISCORD_MESSAGE_LIMIT);
    const { ids, error } = await this.posting.reply(
      identity.client,
      message.channel,
      chunks,
      prefix + message.text,
      ALLOWED_MENTIONS,
      options,
    );
    if (error !== undefined && ids.length === 0) {
      throw new AdapterError(PLATFORM, `${identity.agent.name} could not post: ${describeError(error)}`, {
        cause: error,
      });
    }
    return { messageIds: ids };
  }

  private openStream(channel: string, agent: string): StreamingPost | undefined {
    if (this.identities.length === 0) return undefined;
    const { identity, prefix } = this.speaker({ channel, agent, text: '' });
    const rest = identity.client.rest;
    const render = (text: string) =>
      splitMessage(namesToMentions(prefix + text, this.directory), DISCORD_MESSAGE_LIMIT);
    const post = new EditStream({
      preview: (text) => render(text)[0] ?? '',
      final: render,
      notifies: (message) => USER_MENTION.test(message),
      intervalMs: this.options.streamIntervalMs ?? 1000,
      clock: this.options.streamClock ?? systemClock,
      logger: this.log,
      transport: {
        create: async (content) =>
          (await this.posting.send(identity.client, channel, [content], NO_MENTIONS, {}, [], true)).ids[0],
        edit: async (id, content) => {
          await rest.patch(Routes.channelMessage(channel, id), { body: { content, allowed_mentions: NO_MENTIONS } });
        },
        remove: async (id) => {
          await rest.delete(Routes.channelMessage(channel, id));
        },
        append: async (chunks) => (await this.posting.send(identity.client, channel, chunks, ALLOWED_MENTIONS)).ids,
        postWhole: (text) => this.post({ channel, agent, text }),
      },
    });
    // Until the reply is finished or removed, this bot's messages in the room wait before reaching the bridge.
    const key = `${channel}:${identity.client.user?.id ?? identity.agent.name}`;
    const open = this.streams.get(key) ?? new Set();
    this.streams.set(key, open.add(post));
    void post.settled.then(() => {
      open.delete(post);
      if (open.size === 0 && this.streams.get(key) === open) this.streams.delete(key);
    });
    return post;
  }

  /** The DM channel between an agent's bot and a human the adapter has seen (by their `@name`). */
  async openDirect(agent: string, user: string): Promise<string | undefined> {
    const identity = this.identityOf(agent);
    const userId = this.directory.humanId(user.replace(/^@/, ''));
    if (!identity || !userId) return undefined;
    const channel = (await identity.client.rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as {
      id: string;
    };
    this.dmOwner.set(channel.id, identity.agent.name);
    return channel.id;
  }

  /** `#name`, a name, `<#id>` or an id of a text channel the bots can see. */
  async resolveChannel(reference: string): Promise<string | undefined> {
    const ref = reference.trim().replace(/^<#(\d+)>$/, '$1');
    if (/^\d+$/.test(ref)) return ref;
    const name = ref.replace(/^#/, '').toLowerCase();
    for (const { client } of this.identities) {
      for (const channel of client.channels.cache.values()) {
        if (
          (channel.type === ChannelType.GuildText || channel.type === ChannelType.GuildAnnouncement) &&
          channel.name.toLowerCase() === name
        ) {
          return channel.id;
        }
      }
    }
    return undefined;
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

  private roleName(id: string): string | undefined {
    for (const { client } of this.identities) {
      for (const guild of client.guilds.cache.values()) {
        const role = guild.roles.cache.get(id);
        if (role) return role.name;
      }
    }
    return undefined;
  }

  /** Every bot's managed role (`tags.bot_id`): a mention of it addresses that bot. */
  private learnRoles(guild: Guild): void {
    for (const role of guild.roles.cache.values()) this.directory.setRole(role.id, role.tags?.botId);
  }

  private channelName(id: string): string | undefined {
    for (const { client } of this.identities) {
      const channel = client.channels.cache.get(id);
      if (channel && 'name' in channel && channel.name) return channel.name;
    }
    return undefined;
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
      if (packet.t === 'MESSAGE_UPDATE' && this.pending === null) this.onUpdate(identity, packet.d);
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
      if (this.pending === null) void this.catchUp(identity);
    });
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
    const facts = factsFromMessage(message);
    if (this.pending) {
      this.pending.push({ facts, receiver: identity.agent.name });
      return;
    }
    void this.forward(facts, identity.agent.name);
  }

  private onUpdate(identity: Identity, data: unknown): void {
    const facts = factsFromUpdate(data as Parameters<typeof factsFromUpdate>[0]);
    if (facts) void this.forward(facts, identity.agent.name);
  }

  /**
   * Hands one message (or edit) to the bridge, once, whichever bots received it. A live message waits while its
   * room catches up; a fetched one (`missed`) is answered once the room's catch-up is done.
   */
  private async forward(facts: MessageFacts, receiver: string, missed = false): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    if (!missed && this.catchUps.hold(facts.channelId, () => this.forward(facts, receiver))) return;
    if (!this.seen.add(editId(facts))) return;
    // Only the DM's own bot receives a DM, so the receiver is the agent whose private room it is.
    if (facts.isDirect) this.dmOwner.set(facts.channelId, receiver);
    const inbound = toInbound(facts, {
      directory: this.directory,
      allowedBots: this.allowedBots,
      receiver,
      channelName: (id) => this.channelName(id),
      roleName: (id) => this.roleName(id),
      fileOf: (attachment) =>
        attachmentFile(attachment, {
          apiUrl: this.options.config.settings.DISCORD_API_URL,
          maxBytes: this.options.config.settings.DISCORD_MAX_FILE_MB * 1024 * 1024,
        }),
    });
    if (!missed && facts.editedAt === undefined) this.catchUps.forwarded(facts.channelId, facts.id);
    if (!inbound) return;
    if (!(await this.awaitStreams(facts))) return;
    try {
      await sink.receive(missed ? { ...inbound, missed } : inbound);
    } catch (error) {
      this.log.error({ err: error, channel: facts.channelId, id: facts.id }, 'bridge refused a discord message');
    }
  }

  /**
   * A message from a bot that is streaming a reply in this room may be that reply's partial: it waits until the
   * reply is finished (its id is then among the reply's) or removed (then it is dropped: false).
   */
  private async awaitStreams(facts: MessageFacts): Promise<boolean> {
    const open = this.streams.get(`${facts.channelId}:${facts.authorId}`);
    if (!open || open.size === 0) return true;
    const streams = [...open];
    await Promise.all(streams.map((stream) => stream.settled));
    return !streams.some((stream) => stream.dropped.has(facts.id));
  }

  /** The rooms a bot sees: the guild's text channels, and the DMs that are its own. */
  private roomsOf(identity: Identity): { id: string; direct: boolean }[] {
    const rooms: { id: string; direct: boolean }[] = [];
    for (const channel of identity.client.channels.cache.values()) {
      if (channel.type === ChannelType.GuildText || channel.type === ChannelType.GuildAnnouncement) {
        rooms.push({ id: channel.id, direct: false });
      }
    }
    for (const [id, owner] of this.dmOwner) if (owner === identity.agent.name) rooms.push({ id, direct: true });
    return rooms;
  }

  /** Fetches and forwards, oldest first, what each of this bot's rooms received since it was last complete. */
  private async catchUp(identity: Identity): Promise<void> {
    for (const room of this.roomsOf(identity)) {
      await this.catchUps.room(
        room.id,
        (after, max) => fetchMissed(identity.client, room.id, after, max),
        (message: APIMessage) => this.forward(factsFromApi(message, room.direct), identity.agent.name, true),
      );
    }
  }
}
