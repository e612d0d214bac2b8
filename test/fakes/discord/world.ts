import { createHash } from 'node:crypto';

/**
 * The fake Discord's state: one guild with text channels, bot identities (one per token), humans, DM channels
 * and every message ever created. Pure bookkeeping; the REST and gateway halves read and change it.
 */

const DISCORD_EPOCH = 1_420_070_400_000n;

export const ChannelType = { GuildText: 0, DM: 1 } as const;

export interface FakeUser {
  readonly id: string;
  readonly username: string;
  readonly globalName: string | null;
  readonly bot: boolean;
}

export interface FakeBot extends FakeUser {
  readonly token: string;
  /** A bot's application id; Discord makes it equal to the bot user's id for new applications. */
  readonly applicationId: string;
  /** The role Discord creates for a bot when it joins a server (managed, `tags.bot_id`), named after the bot. */
  readonly roleId: string;
}

export interface FakeHuman extends FakeUser {
  /** Server nickname (shown as member display name), if any. */
  readonly nick: string | null;
  /** Whether the human's roles grant Manage Channels. */
  readonly manageChannels: boolean;
  /** Other roles of theirs (ids of roles the server defines, with no permissions): e.g. a team the access policy names. */
  readonly roles: readonly string[];
}

export interface FakeChannel {
  readonly id: string;
  readonly name: string;
  readonly type: number;
  /** For DM channels: the two participants (a human and a bot). */
  readonly recipients: readonly string[];
}

export interface FakeMessage {
  readonly id: string;
  readonly channelId: string;
  readonly authorId: string;
  content: string;
  readonly nonce: string | null;
  readonly replyTo: string | null;
  readonly attachments: readonly FakeAttachment[];
  /** Embeds as the API sends them (`{type: 'rich', title, description, fields, ...}`, what bots post). */
  readonly embeds: readonly FakeEmbed[];
  /** Set for a forward: a snapshot of the forwarded message, taken when it was forwarded. */
  readonly forwarded: ForwardSnapshot | null;
  /** User ids mentioned: `<@id>` in the text, plus the replied-to author when the reply pings. */
  mentionIds: readonly string[];
  /** User ids notified when the message was created: the mentions its `allowed_mentions` let through. */
  readonly pinged: readonly string[];
  readonly createdAt: number;
  editedAt: number | null;
  /** Every content an edit gave the message, oldest first. */
  readonly edits: string[];
  /** Message components as the API takes and sends them: action rows (type 1) of buttons (type 2). */
  components: readonly FakeComponentRow[];
}

/** An action row of buttons, as a bot sends it (`custom_id` comes back in a click's interaction). */
export interface FakeComponentRow {
  readonly type: 1;
  readonly components: ReadonlyArray<{
    readonly type: 2;
    readonly style: number;
    readonly label?: string;
    readonly custom_id?: string;
    readonly url?: string;
    readonly disabled?: boolean;
  }>;
}

/** A file attached to a message; `url` is signed like Discord's CDN links (`ex`, `is`, `hm`). */
export interface FakeAttachment {
  readonly id: string;
  readonly filename: string;
  readonly contentType: string;
  readonly content: Buffer;
  readonly url: string;
}

/** An embed object as the API sends it. */
export type FakeEmbed = Readonly<Record<string, unknown>>;

/** The signature Discord's CDN checks (`hm`) for an attachment link expiring at `ex`. */
export function attachmentSignature(id: string, expires: string): string {
  return createHash('sha256').update(`${id}:${expires}`).digest('hex').slice(0, 32);
}

/** What a forward carries of the original message: its text, files and embeds (Discord sends no author with it). */
export interface ForwardSnapshot {
  readonly messageId: string;
  readonly channelId: string;
  readonly content: string;
  readonly attachments: readonly FakeAttachment[];
  readonly embeds: readonly FakeEmbed[];
  readonly mentionIds: readonly string[];
  readonly createdAt: number;
}

/** Discord's `allowed_mentions` (absent: every mention in the text pings). */
export interface AllowedMentions {
  readonly parse?: readonly string[];
  readonly users?: readonly string[];
  readonly replied_user?: boolean;
}

/** Snowflakes that grow with time and never repeat, so `after=` paging works like Discord's. */
export class SnowflakeClock {
  private last = 0n;
  constructor(private readonly now: () => number = Date.now) {}
  next(): string {
    let id = (BigInt(Math.floor(this.now())) - DISCORD_EPOCH) << 22n;
    if (id <= this.last) id = this.last + 1n;
    this.last = id;
    return id.toString();
  }
}

export class World {
  /** When things happen on this Discord: messages' times and ids, edits (tests may run it ahead of the process). */
  clock: () => number = Date.now;
  readonly ids = new SnowflakeClock(() => this.clock());
  readonly guildId: string;
  readonly guildName = 'Roundtable test server';
  readonly ownerId: string;
  readonly bots: FakeBot[] = [];
  readonly humans: FakeHuman[] = [];
  readonly channels = new Map<string, FakeChannel>();
  readonly messages: FakeMessage[] = [];
  /** Messages deleted through the API, in the order they went. */
  readonly deleted: FakeMessage[] = [];
  /** Where attachments are served (the fake's own address, set once it listens). */
  cdnBase = 'http://127.0.0.1';
  /** (authorId, nonce) → message id, for `enforce_nonce`. */
  readonly nonces = new Map<string, { messageId: string; at: number }>();

  constructor() {
    this.guildId = this.ids.next();
    this.ownerId = this.ids.next();
  }

  addBot(token: string, username: string): FakeBot {
    const id = this.ids.next();
    const bot: FakeBot = {
      id,
      username,
      globalName: null,
      bot: true,
      token,
      applicationId: id,
      roleId: this.ids.next(),
    };
    this.bots.push(bot);
    return bot;
  }

  addHuman(
    username: string,
    options: { nick?: string; globalName?: string; manageChannels?: boolean; roles?: readonly string[] } = {},
  ): FakeHuman {
    const human: FakeHuman = {
      id: this.ids.next(),
      username,
      globalName: options.globalName ?? null,
      bot: false,
      nick: options.nick ?? null,
      manageChannels: options.manageChannels ?? false,
      roles: options.roles ?? [],
    };
    this.humans.push(human);
    return human;
  }

  addChannel(name: string): FakeChannel {
    const channel: FakeChannel = { id: this.ids.next(), name, type: ChannelType.GuildText, recipients: [] };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** The DM channel between a human and a bot, created on first use like `POST /users/@me/channels`. */
  dmChannel(humanId: string, botId: string): FakeChannel {
    for (const channel of this.channels.values()) {
      if (
        channel.type === ChannelType.DM &&
        channel.recipients.includes(humanId) &&
        channel.recipients.includes(botId)
      ) {
        return channel;
      }
    }
    const channel: FakeChannel = { id: this.ids.next(), name: '', type: ChannelType.DM, recipients: [humanId, botId] };
    this.channels.set(channel.id, channel);
    return channel;
  }

  user(id: string): FakeUser | undefined {
    return this.bots.find((bot) => bot.id === id) ?? this.humans.find((human) => human.id === id);
  }

  botByToken(token: string | undefined): FakeBot | undefined {
    if (!token) return undefined;
    const bare = token.replace(/^Bot\s+/i, '');
    return this.bots.find((bot) => bot.token === bare);
  }

  /** Whether a bot can see a channel: every guild channel, and its own DMs. */
  canSee(bot: FakeBot, channel: FakeChannel): boolean {
    return channel.type !== ChannelType.DM || channel.recipients.includes(bot.id);
  }

  message(id: string): FakeMessage | undefined {
    return this.messages.find((message) => message.id === id);
  }

  /** Removes a message; it is remembered in `deleted`. */
  deleteMessage(message: FakeMessage): void {
    const at = this.messages.indexOf(message);
    if (at >= 0) this.messages.splice(at, 1);
    this.deleted.push(message);
  }

  /** Bots' managed roles named by `<@&id>` in a text (Discord fills `mention_roles` with them). */
  roleMentionsIn(content: string): string[] {
    const roles = new Set(this.bots.map((bot) => bot.roleId));
    return [...new Set([...content.matchAll(/<@&(\d+)>/g)].map((match) => match[1] ?? ''))].filter((id) =>
      roles.has(id),
    );
  }

  /** Known users named by `<@id>` / `<@!id>` in a text. */
  mentionsIn(content: string): string[] {
    const ids = new Set<string>();
    for (const match of content.matchAll(/<@!?(\d+)>/g)) {
      if (match[1] && this.user(match[1])) ids.add(match[1]);
    }
    return [...ids];
  }

  /** Creates a message; the caller fans it out. User ids mentioned are those named by `<@id>` / `<@!id>`. */
  createMessage(input: {
    channelId: string;
    authorId: string;
    content: string;
    nonce?: string | null;
    replyTo?: string | null;
    pingReplied?: boolean;
    allowedMentions?: AllowedMentions;
    forwardOf?: FakeMessage;
    /** Files uploaded with the message; `url` replaces the signed link the fake would give it. */
    attachments?: readonly { filename: string; contentType: string; content: Buffer; url?: string }[];
    embeds?: readonly FakeEmbed[];
    components?: readonly FakeComponentRow[];
  }): FakeMessage {
    const inText = this.mentionsIn(input.content);
    const mentionIds = new Set(inText);
    const replied = input.replyTo ? this.message(input.replyTo) : undefined;
    if (replied && input.pingReplied !== false) mentionIds.add(replied.authorId);
    const allowed = input.allowedMentions;
    const pinged = allowed
      ? [...mentionIds].filter((id) =>
          inText.includes(id)
            ? (allowed.parse?.includes('users') ?? false) || (allowed.users?.includes(id) ?? false)
            : allowed.replied_user === true,
        )
      : [...mentionIds];
    const message: FakeMessage = {
      id: this.ids.next(),
      channelId: input.channelId,
      authorId: input.authorId,
      content: input.content,
      nonce: input.nonce ?? null,
      replyTo: input.replyTo ?? null,
      attachments: (input.attachments ?? []).map((file) => {
        const id = this.ids.next();
        const expires = Math.floor(Date.now() / 1000 + 86_400).toString(16);
        const query = `ex=${expires}&is=${Math.floor(Date.now() / 1000).toString(16)}&hm=${attachmentSignature(id, expires)}&`;
        const url = `${this.cdnBase}/attachments/${input.channelId}/${id}/${encodeURIComponent(file.filename)}?${query}`;
        return {
          id,
          filename: file.filename,
          contentType: file.contentType,
          content: file.content,
          url: file.url ?? url,
        };
      }),
      embeds: input.embeds ?? [],
      forwarded: input.forwardOf
        ? {
            messageId: input.forwardOf.id,
            channelId: input.forwardOf.channelId,
            content: input.forwardOf.content,
            attachments: input.forwardOf.attachments,
            embeds: input.forwardOf.embeds,
            mentionIds: this.mentionsIn(input.forwardOf.content),
            createdAt: input.forwardOf.createdAt,
          }
        : null,
      mentionIds: [...mentionIds],
      pinged,
      createdAt: this.clock(),
      editedAt: null,
      edits: [],
      components: input.components ?? [],
    };
    this.messages.push(message);
    return message;
  }
}
