/**
 * A local Discord for tests: REST (`/api/v10`) and gateway on one 127.0.0.1 port, speaking the protocol the real
 * discord.js talks. One guild, several bot identities (one per token), humans, DMs; every message created is
 * fanned out to each connected bot like Discord does. Test controls say what humans do.
 */
import { EventEmitter } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeGateway } from './gateway.js';
import { channelJson, memberJson, messageJson, permissionsOf, userJson } from './payloads.js';
import {
  type FailureRule,
  handleRest,
  type InteractionReply,
  type PendingInteraction,
  type RateLimitRule,
  type RecordedRequest,
  type RestContext,
  visibleBots,
} from './rest.js';
import {
  attachmentSignature,
  ChannelType,
  type FakeBot,
  type FakeChannel,
  type FakeEmbed,
  type FakeHuman,
  type FakeMessage,
  World,
} from './world.js';

export type { FakeBot, FakeChannel, FakeEmbed, FakeHuman, FakeMessage, InteractionReply, RecordedRequest };

export interface FakeDiscordOptions {
  /** Bot identities: `name` becomes the bot's username. */
  readonly bots: readonly { readonly token: string; readonly name: string }[];
  readonly humans?: readonly {
    readonly name: string;
    readonly nick?: string;
    readonly manageChannels?: boolean;
    /** Role ids of theirs (the server defines each, with no permissions). */
    readonly roles?: readonly string[];
  }[];
  /** Guild text channel names; default `general`. */
  readonly channels?: readonly string[];
  /** When messages and edits are made (default: the process's clock); read at each one. */
  readonly clock?: () => number;
}

export interface FakeDiscord {
  /** The REST base to give discord.js (`rest.api`): it appends `/v10`. */
  readonly apiURL: string;
  readonly gatewayURL: string;
  readonly world: World;
  readonly requests: readonly RecordedRequest[];
  bot(name: string): FakeBot;
  human(name: string): FakeHuman;
  channel(name: string): FakeChannel;
  /**
   * A human posts in a channel; `replyTo` makes it a Discord reply (pinging the replied author by default), and
   * `attachments` uploads files with it (served, signed, at their `url`).
   */
  humanSays(
    channel: FakeChannel | string,
    human: FakeHuman | string,
    text: string,
    options?: {
      replyTo?: string;
      pingReplied?: boolean;
      attachments?: readonly { filename: string; contentType: string; content: Buffer | string; url?: string }[];
      embeds?: readonly FakeEmbed[];
    },
  ): FakeMessage;
  /** Requests for attachments' bytes: which attachment, and the status the fake answered. */
  readonly attachmentRequests: readonly { id: string; status: number; authorization: string | undefined }[];
  /** A bot posts as if through its own client (a foreign bot, or an agent's bot replying with a ping). */
  botSays(
    channel: FakeChannel | string,
    bot: FakeBot | string,
    text: string,
    options?: { replyTo?: string; embeds?: readonly FakeEmbed[] },
  ): FakeMessage;
  /**
   * A human edits their message: every bot that sees it gets MESSAGE_UPDATE with the whole message. `at`: when the
   * edit was made (default: now).
   */
  humanEdits(message: FakeMessage, text: string, options?: { at?: number }): void;
  /**
   * Discord resolves a link preview in a message: MESSAGE_UPDATE with the embed and no `edited_timestamp`
   * (nobody edited anything).
   */
  embedResolves(message: FakeMessage): void;
  /**
   * A human forwards an earlier message into a channel: a message of its own with no text, a FORWARD reference, and a
   * snapshot of the original (its text, attachments and embeds).
   */
  forward(channel: FakeChannel | string, human: FakeHuman | string, original: FakeMessage): FakeMessage;
  /** A human sends a DM to a bot; only that bot receives it. */
  dm(human: FakeHuman | string, bot: FakeBot | string, text: string): FakeMessage;
  /**
   * A human runs a slash command in a channel (or their DM with `bot`); resolves with the reply the bot gives.
   * `channelObject: false` sends only `channel_id`, as some interactions arrive, without the `channel` object;
   * `channelId: false` leaves out `channel_id` too.
   */
  slash(
    bot: FakeBot | string,
    human: FakeHuman | string,
    channel: FakeChannel | string,
    command: string,
    options?: Record<string, string>,
    shape?: { channelObject?: boolean; channelId?: boolean },
  ): Promise<InteractionReply>;
  /**
   * Someone clicks a button under a bot's message: INTERACTION_CREATE of type MESSAGE_COMPONENT (3), sent to the bot
   * whose message it is, with `data.custom_id`, the whole `message`, `channel_id` and `channel`, and the clicker
   * (`member.user` in a server, `user` in a DM); resolves with the reply the bot gives. Discord sends only a
   * custom_id the message carries, and only to the message's own bot: `forged` sends any custom_id to any bot (a
   * payload Discord would never send), and `channelId` names another channel than the message's.
   */
  click(
    bot: FakeBot | string,
    who: FakeHuman | FakeBot | string,
    message: FakeMessage,
    customId: string,
    shape?: { forged?: boolean; channelId?: string },
  ): Promise<InteractionReply>;
  /** Messages in a channel, oldest first. */
  messages(channel: FakeChannel | string): FakeMessage[];
  /** Messages posted by bots (optionally one bot) in a channel, oldest first. */
  botMessages(channel: FakeChannel | string, bot?: FakeBot | string): FakeMessage[];
  /** Calls `listener` synchronously each time a message is created (benchmarks time replies with it). */
  onMessage(listener: (message: FakeMessage) => void): () => void;
  /** Resolves once `predicate` holds; checked after every request, message and gateway (dis)connection. */
  until(predicate: () => boolean): Promise<void>;
  /** Closes a bot's gateway connection with a code after which clients reconnect (see FakeGateway.drop). */
  dropGateway(bot: FakeBot | string, options?: { resumable?: boolean }): void;
  /** Resolves when the bot has a live gateway session. */
  connected(bot: FakeBot | string): Promise<void>;
  /** Whether the bot has a live gateway session now. */
  gatewayConnected(bot: FakeBot | string): boolean;
  /** The next `count` matching requests answer 429 with Retry-After. */
  rateLimit(rule: { method?: string; path?: string; count?: number; retryAfterMs?: number; global?: boolean }): void;
  /** The next `count` message posts are created (and fanned out) but answered 502, so clients retry. */
  loseResponses(count: number): void;
  /**
   * The next `count` (default 1) matching requests are refused with `status` (500 by default) and nothing is done:
   * a Discord outage (5xx; discord.js tries a request 4 times on a 5xx, so 4 failures make one call fail) or a
   * refusal (403 Missing Access, 404 Unknown Channel) with Discord's error body.
   */
  failRequests(rule: { method?: string; path?: string; count?: number; status?: number; code?: number }): void;
  /** Every request failRequests planned and not yet answered goes through again. */
  stopFailing(): void;
  /** The bots lose (or regain) Attach Files: messages with files are refused. */
  refuseAttachments(refuse: boolean): void;
  /**
   * The next `count` message posts in a channel (from now on: not added to refusals still pending) are refused with
   * 403 Missing Permissions, and nothing is created; 0 ends the refusals.
   */
  refusePosts(channel: FakeChannel | string, count?: number): void;
  /** Registered application commands: `${applicationId}:${guildId | 'global'}` → commands. */
  readonly commands: ReadonlyMap<string, unknown[]>;
  /** Interaction follow-ups (the parts of a long command answer after the first). */
  readonly followUps: RestContext['followUps'];
  readonly identifies: FakeGateway['log'];
  close(): Promise<void>;
}

/** Serves an attachment like Discord's CDN: only with a valid signature for an unexpired link. */
function serveAttachment(world: World, raw: string, response: ServerResponse): number {
  const url = new URL(raw, 'http://fake');
  const [, , channelId, id] = url.pathname.split('/');
  const file = world.messages
    .filter((message) => message.channelId === channelId)
    .flatMap((message) => message.attachments)
    .find((candidate) => candidate.id === id);
  const expires = url.searchParams.get('ex') ?? '';
  const valid =
    file &&
    url.searchParams.get('hm') === attachmentSignature(file.id, expires) &&
    Number.parseInt(expires, 16) * 1000 > Date.now();
  if (!file || !valid) {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('This content is no longer available.');
    return 404;
  }
  // The CDN serves what it sniffed; the type the uploader's client claimed (any text at all) is only in the payload.
  const served = /^[\w.+-]+\/[\w.+-]+$/.test(file.contentType) ? file.contentType : 'application/octet-stream';
  response.writeHead(200, { 'content-type': served, 'content-length': String(file.content.byteLength) });
  response.end(file.content);
  return 200;
}

export async function startFakeDiscord(options: FakeDiscordOptions): Promise<FakeDiscord> {
  const world = new World();
  if (options.clock) world.clock = options.clock;
  for (const bot of options.bots) world.addBot(bot.token, bot.name);
  for (const human of options.humans ?? [{ name: 'alice' }]) {
    world.addHuman(human.name, {
      ...(human.nick ? { nick: human.nick } : {}),
      manageChannels: human.manageChannels ?? false,
      ...(human.roles ? { roles: human.roles } : {}),
    });
  }
  for (const name of options.channels ?? ['general']) world.addChannel(name);

  const events = new EventEmitter();
  events.setMaxListeners(0);
  let port = 0;
  const gatewayUrl = () => `ws://127.0.0.1:${port}/gateway`;
  const gateway = new FakeGateway(world, gatewayUrl, () => events.emit('change'));
  const context: RestContext = {
    world,
    gateway,
    requests: [],
    rateLimits: [] as RateLimitRule[],
    failures: [] as FailureRule[],
    lostResponses: 0,
    refuseAttachments: false,
    refusedPosts: new Map<string, number>(),
    interactions: new Map<string, PendingInteraction>(),
    followUps: [],
    commands: new Map(),
    gatewayUrl,
    publish(message) {
      const data = messageJson(world, message, { gateway: true });
      gateway.dispatch('MESSAGE_CREATE', data, visibleBots(context, message));
      events.emit('message', message);
      events.emit('change');
    },
    update(message, extra = {}) {
      const data = { ...messageJson(world, message, { gateway: true }), ...extra };
      gateway.dispatch('MESSAGE_UPDATE', data, visibleBots(context, message));
      events.emit('change');
    },
  };

  const attachmentRequests: { id: string; status: number; authorization: string | undefined }[] = [];
  const server: Server = createServer((request, response) => {
    if (request.method === 'GET' && request.url?.startsWith('/attachments/')) {
      const status = serveAttachment(world, request.url, response);
      attachmentRequests.push({
        id: request.url.split('/')[3] ?? '',
        status,
        authorization: request.headers.authorization,
      });
      events.emit('change');
      return;
    }
    void handleRest(context, request, response).finally(() => events.emit('change'));
  });
  server.on('upgrade', (request, socket, head) => {
    if (request.url?.startsWith('/gateway')) gateway.handleUpgrade(request, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  world.cdnBase = `http://127.0.0.1:${port}`;

  const bot = (ref: FakeBot | string): FakeBot => {
    if (typeof ref !== 'string') return ref;
    const found = world.bots.find((candidate) => candidate.username === ref || candidate.id === ref);
    if (!found) throw new Error(`fake discord: no bot ${ref}`);
    return found;
  };
  const human = (ref: FakeHuman | string): FakeHuman => {
    if (typeof ref !== 'string') return ref;
    const found = world.humans.find((candidate) => candidate.username === ref || candidate.id === ref);
    if (!found) throw new Error(`fake discord: no human ${ref}`);
    return found;
  };
  const channel = (ref: FakeChannel | string): FakeChannel => {
    if (typeof ref !== 'string') return ref;
    const found =
      world.channels.get(ref) ??
      [...world.channels.values()].find(
        (candidate) => candidate.type === ChannelType.GuildText && candidate.name === ref,
      );
    if (!found) throw new Error(`fake discord: no channel ${ref}`);
    return found;
  };
  const messages = (ref: FakeChannel | string) => world.messages.filter((m) => m.channelId === channel(ref).id);
  /** What every interaction says of who sent it and where: the member in a server, the user in a DM. */
  const interactionOf = (inGuild: boolean, who: Parameters<typeof userJson>[0]) => ({
    ...(inGuild
      ? {
          guild_id: world.guildId,
          guild_locale: 'en-US',
          member: { ...memberJson(world, who, true), permissions: permissionsOf(who) },
        }
      : { user: userJson(who) }),
    app_permissions: '0',
    locale: 'en-US',
    entitlements: [],
    authorizing_integration_owners: {},
    context: inGuild ? 0 : 1,
  });

  return {
    apiURL: `http://127.0.0.1:${port}/api`,
    gatewayURL: gatewayUrl(),
    world,
    requests: context.requests,
    attachmentRequests,
    commands: context.commands,
    followUps: context.followUps,
    identifies: gateway.log,
    bot,
    human,
    channel,
    humanSays(where, who, text, extra = {}) {
      const message = world.createMessage({
        channelId: channel(where).id,
        authorId: human(who).id,
        content: text,
        replyTo: extra.replyTo ?? null,
        pingReplied: extra.pingReplied ?? true,
        attachments: (extra.attachments ?? []).map((file) => ({ ...file, content: Buffer.from(file.content) })),
        ...(extra.embeds ? { embeds: extra.embeds } : {}),
      });
      context.publish(message);
      return message;
    },
    botSays(where, who, text, extra = {}) {
      const message = world.createMessage({
        channelId: channel(where).id,
        authorId: bot(who).id,
        content: text,
        replyTo: extra.replyTo ?? null,
        ...(extra.embeds ? { embeds: extra.embeds } : {}),
      });
      context.publish(message);
      return message;
    },
    humanEdits(message, text, extra = {}) {
      message.content = text;
      message.mentionIds = world.mentionsIn(text);
      message.edits.push(text);
      message.editedAt = extra.at ?? world.clock();
      context.update(message);
    },
    embedResolves(message) {
      context.update(message, {
        embeds: [{ type: 'link', url: 'https://example.com/', title: 'Example Domain', description: 'An example.' }],
      });
    },
    forward(where, who, original) {
      const message = world.createMessage({
        channelId: channel(where).id,
        authorId: human(who).id,
        content: '',
        forwardOf: original,
      });
      context.publish(message);
      return message;
    },
    dm(who, to, text) {
      const room = world.dmChannel(human(who).id, bot(to).id);
      const message = world.createMessage({ channelId: room.id, authorId: human(who).id, content: text });
      context.publish(message);
      return message;
    },
    slash(to, who, where, command, values = {}, shape = {}) {
      const app = bot(to);
      const user = human(who);
      const room = typeof where === 'string' && where === 'dm' ? world.dmChannel(user.id, app.id) : channel(where);
      const inGuild = room.type !== ChannelType.DM;
      const token = `itoken-${world.ids.next()}`;
      const reply = new Promise<InteractionReply>((resolve) => {
        context.interactions.set(token, { applicationId: app.applicationId, deferredFlags: null, resolve });
      });
      gateway.dispatch(
        'INTERACTION_CREATE',
        {
          id: world.ids.next(),
          application_id: app.applicationId,
          type: 2,
          token,
          version: 1,
          data: {
            id: world.ids.next(),
            name: command,
            type: 1,
            options: Object.entries(values).map(([name, value]) => ({ name, type: 3, value })),
            ...(inGuild ? { guild_id: world.guildId } : {}),
          },
          ...(shape.channelId === false ? {} : { channel_id: room.id }),
          ...(shape.channelObject === false ? {} : { channel: channelJson(world, room) }),
          ...interactionOf(inGuild, user),
        },
        [app.id],
      );
      return reply;
    },
    click(to, who, message, customId, shape = {}) {
      const app = bot(to);
      const clicker =
        typeof who !== 'string' ? who : (world.humans.find((h) => h.username === who || h.id === who) ?? bot(who));
      const carried = message.components.some((row) => row.components.some((b) => b.custom_id === customId));
      if (!shape.forged && (message.authorId !== app.id || !carried)) {
        throw new Error(`fake discord: ${app.username}'s message ${message.id} has no button ${customId}`);
      }
      const room = world.channels.get(shape.channelId ?? message.channelId);
      if (!room) throw new Error(`fake discord: no channel ${shape.channelId ?? message.channelId}`);
      const inGuild = room.type !== ChannelType.DM;
      const token = `itoken-${world.ids.next()}`;
      const reply = new Promise<InteractionReply>((resolve) => {
        context.interactions.set(token, { applicationId: app.applicationId, deferredFlags: null, resolve });
      });
      gateway.dispatch(
        'INTERACTION_CREATE',
        {
          id: world.ids.next(),
          application_id: app.applicationId,
          type: 3,
          token,
          version: 1,
          data: { custom_id: customId, component_type: 2 },
          message: messageJson(world, message, { gateway: false }),
          channel_id: room.id,
          channel: channelJson(world, room),
          ...interactionOf(inGuild, clicker),
        },
        [app.id],
      );
      return reply;
    },
    messages,
    botMessages(where, who) {
      const only = who ? bot(who).id : undefined;
      return messages(where).filter((message) =>
        only ? message.authorId === only : world.bots.some((candidate) => candidate.id === message.authorId),
      );
    },
    onMessage(listener) {
      events.on('message', listener);
      return () => events.off('message', listener);
    },
    until(predicate) {
      if (predicate()) return Promise.resolve();
      return new Promise((resolve) => {
        const check = () => {
          if (!predicate()) return;
          events.off('change', check);
          resolve();
        };
        events.on('change', check);
      });
    },
    dropGateway(who, extra = {}) {
      gateway.drop(bot(who).id, { resumable: extra.resumable ?? true });
    },
    connected(who) {
      return gateway.connected(bot(who).id);
    },
    gatewayConnected(who) {
      return gateway.isConnected(bot(who).id);
    },
    loseResponses(count) {
      context.lostResponses += count;
    },
    stopFailing() {
      context.failures.length = 0;
    },
    failRequests(rule) {
      context.failures.push({
        ...(rule.method ? { method: rule.method } : {}),
        ...(rule.path ? { path: rule.path } : {}),
        remaining: rule.count ?? 1,
        status: rule.status ?? 500,
        code: rule.code ?? 0,
      });
    },
    refuseAttachments(refuse) {
      context.refuseAttachments = refuse;
    },
    refusePosts(where, count = 1) {
      context.refusedPosts.set(channel(where).id, count);
    },
    rateLimit(rule) {
      context.rateLimits.push({
        ...(rule.method ? { method: rule.method } : {}),
        ...(rule.path ? { path: rule.path } : {}),
        remaining: rule.count ?? 1,
        retryAfterMs: rule.retryAfterMs ?? 50,
        global: rule.global ?? false,
      });
    },
    async close() {
      gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
