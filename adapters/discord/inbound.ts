/**
 * Discord messages → the router's Inbound. Both a live discord.js Message and a raw message fetched from the
 * channel history (catch-up) are reduced to the same plain facts first, so both paths classify alike.
 */
import type { APIAttachment, APIEmbed, APIMessage, Attachment, Embed } from 'discord.js';
import { ChannelType, type Message, MessageReferenceType, MessageType } from 'discord.js';
import type { Inbound, InboundFile } from '../../src/ports.js';
import { withShared } from '../shared/quote.js';
import { plainMarkup } from './markup.js';
import { type Directory, mentionsToNames } from './mentions.js';

/** Discord's limit for one message's content (interaction replies too). */
export const DISCORD_MESSAGE_LIMIT = 2000;

export const PLATFORM = 'discord';

export interface MessageFacts {
  readonly id: string;
  readonly channelId: string;
  readonly isDirect: boolean;
  readonly type: number;
  readonly authorId: string;
  readonly authorIsBot: boolean;
  /** Display name: server nickname, else global name, else username. */
  readonly authorName: string;
  /** The author's role ids in the server (the gateway's `member.roles`); none in a DM. */
  readonly authorRoles?: readonly string[] | undefined;
  readonly content: string;
  /** The text of its rich embeds (a bot's embeds; link previews repeat a link the text already has). */
  readonly embeds: readonly string[];
  readonly attachments: readonly AttachmentFacts[];
  /** Users mentioned in the message, id → display name (only those written in the text are converted). */
  readonly mentioned: ReadonlyMap<string, string>;
  /** What a forward carries: the forwarded messages' text, embeds and files (Discord's `message_snapshots`). */
  readonly shared: readonly SharedFacts[];
  /** For a reply: who wrote the message it replies to (Discord's `referenced_message.author`). */
  readonly repliedTo?: string | undefined;
  readonly at: number;
  /** Set when these facts are an edit (MESSAGE_UPDATE with `edited_timestamp`): when it was made. */
  readonly editedAt?: number | undefined;
}

/** A file attached to a message, as Discord describes it (its `url` is a signed CDN address). */
export interface AttachmentFacts {
  readonly name: string;
  readonly url: string;
  readonly size: number;
  readonly contentType?: string | undefined;
}

export interface SharedFacts {
  readonly content: string;
  readonly embeds: readonly string[];
  readonly attachments: readonly AttachmentFacts[];
  readonly mentioned: ReadonlyMap<string, string>;
}

/**
 * The readable text of a rich embed (what bots post): author, title, description, fields, footer, one a line.
 * Link, image and video previews are left out: the link they preview is in the message's text.
 */
export function embedText(embed: APIEmbed): string | undefined {
  if (embed.type !== undefined && embed.type !== 'rich') return undefined;
  const lines = [
    embed.author?.name,
    embed.title,
    embed.description,
    ...(embed.fields ?? []).map((field) => `${field.name}: ${field.value}`),
    embed.footer?.text,
  ].filter((line): line is string => typeof line === 'string' && line.trim() !== '');
  return lines.length > 0 ? lines.join('\n') : undefined;
}

function embedTexts(embeds: readonly APIEmbed[] | undefined): string[] {
  return (embeds ?? []).map(embedText).filter((text): text is string => text !== undefined);
}

function attachmentsFromApi(files: readonly APIAttachment[] | undefined): AttachmentFacts[] {
  return (files ?? []).map((file) => ({
    name: file.filename,
    url: file.url,
    size: file.size,
    contentType: file.content_type,
  }));
}

function attachmentsFromClient(files: Iterable<Attachment>): AttachmentFacts[] {
  return [...files].map((file) => ({
    name: file.name,
    url: file.url,
    size: file.size,
    contentType: file.contentType ?? undefined,
  }));
}

const embedsFromClient = (embeds: readonly Embed[]): string[] => embedTexts(embeds.map((embed) => embed.data));

type Users = Iterable<{ id: string; displayName?: string; global_name?: string | null; username: string }>;

/** Mentioned users, id → the name to show for them. */
function namesOf(users: Users, nick: (id: string) => string | null | undefined = () => undefined): Map<string, string> {
  const names = new Map<string, string>();
  for (const user of users) names.set(user.id, nick(user.id) ?? user.displayName ?? user.global_name ?? user.username);
  return names;
}

export function factsFromMessage(message: Message): MessageFacts {
  const mentioned = namesOf(message.mentions.users.values(), (id) => message.mentions.members?.get(id)?.displayName);
  return {
    id: message.id,
    channelId: message.channelId,
    isDirect: message.channel.type === ChannelType.DM,
    type: message.type,
    authorId: message.author.id,
    authorIsBot: message.author.bot || message.webhookId !== null,
    authorName: message.member?.displayName ?? message.author.displayName,
    // The role ids as the gateway sent them (the roles' cache would need every role of the server loaded).
    authorRoles: (message.member as unknown as { _roles?: readonly string[] } | null)?._roles,
    content: message.content,
    embeds: embedsFromClient(message.embeds),
    attachments: attachmentsFromClient(message.attachments.values()),
    mentioned,
    shared: [...message.messageSnapshots.values()].map((snapshot) => ({
      content: snapshot.content,
      embeds: embedsFromClient(snapshot.embeds),
      attachments: attachmentsFromClient(snapshot.attachments.values()),
      mentioned: namesOf(snapshot.mentions.users.values()),
    })),
    // discord.js keeps the replied-to author from `referenced_message` as `mentions.repliedUser`.
    repliedTo: message.reference?.type === MessageReferenceType.Default ? message.mentions.repliedUser?.id : undefined,
    at: message.createdTimestamp,
  };
}

/** A raw API message (from `GET /channels/:id/messages`); `isDirect` comes from the channel it was read from. */
export function factsFromApi(message: APIMessage, isDirect: boolean): MessageFacts {
  const mentioned = namesOf(message.mentions, (id) => {
    const user = message.mentions.find((candidate) => candidate.id === id);
    return (user as { member?: { nick?: string | null } } | undefined)?.member?.nick;
  });
  const member = (message as { member?: { nick?: string | null; roles?: string[] } }).member;
  return {
    id: message.id,
    channelId: message.channel_id,
    isDirect,
    type: message.type,
    authorId: message.author.id,
    authorIsBot: message.author.bot === true || message.webhook_id !== undefined,
    authorName: member?.nick ?? message.author.global_name ?? message.author.username,
    authorRoles: member?.roles,
    content: message.content,
    embeds: embedTexts(message.embeds),
    attachments: attachmentsFromApi(message.attachments),
    mentioned,
    shared: (message.message_snapshots ?? []).map((snapshot) => ({
      content: snapshot.message.content,
      embeds: embedTexts(snapshot.message.embeds),
      attachments: attachmentsFromApi(snapshot.message.attachments),
      mentioned: namesOf(snapshot.message.mentions),
    })),
    repliedTo:
      (message.message_reference?.type ?? MessageReferenceType.Default) === MessageReferenceType.Default
        ? (message.referenced_message?.author.id ?? undefined)
        : undefined,
    at: Date.parse(message.timestamp),
  };
}

export interface InboundContext {
  readonly directory: Directory;
  /** Ids of foreign bots allowed to talk to the agents (DISCORD_ALLOWED_BOTS). */
  readonly allowedBots: ReadonlySet<string>;
  /** The agent whose bot received the message (the DM's owner for a DM). */
  readonly receiver: string;
  /** A guild channel's name by id, for `<#id>` and channel links (from the receiving client's cache). */
  readonly channelName?: (id: string) => string | undefined;
  /** A member's role ids from the client's cache, for a message fetched without its member (a catch-up). */
  readonly rolesOf?: (userId: string) => readonly string[] | undefined;
  /** A guild role's name by id, for `<@&id>` of roles that are not our bots' (from the client's cache). */
  readonly roleName?: (id: string) => string | undefined;
  /** Makes an attachment downloadable; without it, attachments are left out. */
  readonly fileOf?: (attachment: AttachmentFacts) => InboundFile;
}

/**
 * The facts of an edit, from a MESSAGE_UPDATE (a whole message object since API v10). Null when it is no edit by
 * someone: an update that only adds embeds (a link preview resolving) has no `edited_timestamp`.
 */
export function factsFromUpdate(update: APIMessage & { guild_id?: string }): MessageFacts | null {
  if (!update.edited_timestamp || !update.author || typeof update.content !== 'string') return null;
  return { ...factsFromApi(update, update.guild_id === undefined), editedAt: Date.parse(update.edited_timestamp) };
}

/** The id an edit is stored and deduplicated under: the message's, the edit's time. */
export function editId(facts: Pick<MessageFacts, 'id' | 'editedAt'>): string {
  return facts.editedAt === undefined ? facts.id : `${facts.id}:edit:${facts.editedAt}`;
}

/** The author's roles: the message's member's, else (a fetched message) as the cache knows them; none in a DM. */
function rolesOf(facts: MessageFacts, context: InboundContext): { roles?: readonly string[] } {
  const roles = facts.authorRoles ?? (facts.isDirect ? undefined : context.rolesOf?.(facts.authorId));
  return roles && roles.length > 0 ? { roles } : {};
}

/** Converts a message for the router, or returns null when the router must not see it. */
export function toInbound(facts: MessageFacts, context: InboundContext): Inbound | null {
  // Only people's messages: joins, pins, boosts and other system messages are not conversation.
  if (facts.type !== MessageType.Default && facts.type !== MessageType.Reply) return null;
  const agent = context.directory.agentOf(facts.authorId);
  let author: Inbound['author'];
  if (agent) {
    author = { id: facts.authorId, name: agent, kind: 'agent' };
  } else if (facts.authorIsBot && !context.allowedBots.has(facts.authorId)) {
    return null; // foreign bots are ignored unless allowlisted: bot loops start there
  } else {
    // An allowlisted bot may talk to the agents but gets no agent rights: it counts as a human.
    context.directory.rememberHuman(facts.authorId, facts.authorName);
    author = {
      id: facts.authorId,
      name: context.directory.humanName(facts.authorId) ?? facts.authorName,
      kind: 'human',
      ...rolesOf(facts, context),
    };
  }
  for (const [id, name] of facts.mentioned) {
    if (!context.directory.agentOf(id)) context.directory.rememberHuman(id, name);
  }
  const markup = { channelName: context.channelName ?? (() => undefined), at: facts.at };
  const plain = (content: string, mentioned: ReadonlyMap<string, string>) =>
    plainMarkup(mentionsToNames(content, context.directory, mentioned, context.roleName), markup);
  // A message's text and its embeds' text, read alike for the message itself and for what it forwards.
  const readable = (content: string, embeds: readonly string[]) => [content, ...embeds].filter(Boolean).join('\n');
  const text = withShared(
    plain(readable(facts.content, facts.embeds), facts.mentioned),
    facts.shared.map((shared) => ({ text: plain(readable(shared.content, shared.embeds), shared.mentioned) })),
  );
  const edit = facts.editedAt;
  const channelName = facts.isDirect ? undefined : context.channelName?.(facts.channelId);
  // People's files only (our agents attach none), a forward's files with them; an edit brings no new files.
  const fileOf = author.kind === 'human' && edit === undefined ? context.fileOf : undefined;
  const attachments = [...facts.attachments, ...facts.shared.flatMap((shared) => shared.attachments)];
  const files = fileOf ? attachments.map(fileOf) : [];
  if (!text.trim() && files.length === 0) return null;
  // A human's reply to an agent's message addresses that agent; an agent replying to an agent asks nothing
  // (reply pings are how bot loops start).
  const replied = author.kind === 'human' && facts.repliedTo ? context.directory.agentOf(facts.repliedTo) : undefined;
  // Only people's edits can address someone; an agent's edits are its streamed replies.
  if (edit !== undefined && author.kind !== 'human') return null;
  return {
    platform: PLATFORM,
    channel: facts.channelId,
    messageId: editId(facts),
    author,
    text,
    ...(channelName ? { channelName } : {}),
    ...(facts.isDirect ? { direct: { agent: context.receiver } } : {}),
    ...(replied ? { addressed: [replied] } : {}),
    ...(files.length > 0 ? { files } : {}),
    ...(edit !== undefined ? { edit: { of: facts.id, originalAt: facts.at } } : {}),
    at: edit ?? facts.at,
  };
}
