/** Discord API v10 JSON shapes built from the fake's world, as the real API and gateway send them. */
import {
  ChannelType,
  type FakeAttachment,
  type FakeBot,
  type FakeChannel,
  type FakeHuman,
  type FakeMessage,
  type FakeUser,
  type ForwardSnapshot,
  type World,
} from './world.js';

type Json = Record<string, unknown>;

/** Manage Channels (1 << 4), the permission that makes a human an operator without OPERATORS. */
export const MANAGE_CHANNELS = 1n << 4n;
/** What @everyone may do in the fake guild: view, send, read history, use application commands. */
const EVERYONE_PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 16n) | (1n << 31n);

export function userJson(user: FakeUser): Json {
  return {
    id: user.id,
    username: user.username,
    global_name: user.globalName,
    discriminator: '0',
    avatar: null,
    bot: user.bot,
  };
}

function isHuman(user: FakeUser): user is FakeHuman {
  return !user.bot;
}

function memberPermissions(user: FakeUser): bigint {
  return isHuman(user) && user.manageChannels ? EVERYONE_PERMISSIONS | MANAGE_CHANNELS : EVERYONE_PERMISSIONS;
}

/** A guild member without its `user` (the shape inside MESSAGE_CREATE), or with it (GUILD_CREATE). */
export function memberJson(world: World, user: FakeUser, withUser: boolean): Json {
  const roles = isHuman(user)
    ? [...(user.manageChannels ? [managerRoleId(world)] : []), ...user.roles]
    : [(user as FakeBot).roleId];
  return {
    ...(withUser ? { user: userJson(user) } : {}),
    nick: isHuman(user) ? user.nick : null,
    roles,
    joined_at: new Date(0).toISOString(),
    deaf: false,
    mute: false,
    flags: 0,
  };
}

function managerRoleId(world: World): string {
  return (BigInt(world.guildId) + 1n).toString();
}

export function channelJson(world: World, channel: FakeChannel): Json {
  if (channel.type === ChannelType.DM) {
    return {
      id: channel.id,
      type: ChannelType.DM,
      last_message_id: null,
      recipients: channel.recipients
        .map((id) => world.user(id))
        .filter((user): user is FakeUser => user !== undefined)
        .map(userJson),
    };
  }
  return {
    id: channel.id,
    type: channel.type,
    guild_id: world.guildId,
    name: channel.name,
    position: 0,
    permission_overwrites: [],
    nsfw: false,
    topic: null,
    parent_id: null,
    last_message_id: null,
    rate_limit_per_user: 0,
  };
}

/** The managed role Discord gives a bot in each server it joins: the @-picker offers it before the bot itself. */
function botRoleJson(bot: FakeBot, position: number): Json {
  return {
    id: bot.roleId,
    name: bot.username,
    description: null,
    permissions: EVERYONE_PERMISSIONS.toString(),
    position,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    managed: true,
    mentionable: false,
    flags: 0,
    tags: { bot_id: bot.id },
  };
}

export function guildJson(world: World, bot: FakeBot): Json {
  const members = [bot, ...world.humans];
  return {
    id: world.guildId,
    name: world.guildName,
    icon: null,
    owner_id: world.ownerId,
    unavailable: false,
    large: false,
    member_count: world.humans.length + world.bots.length,
    joined_at: new Date(0).toISOString(),
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    premium_tier: 0,
    nsfw_level: 0,
    preferred_locale: 'en-US',
    system_channel_flags: 0,
    features: [],
    roles: [
      { id: world.guildId, name: '@everyone', permissions: EVERYONE_PERMISSIONS.toString(), position: 0, color: 0 },
      { id: managerRoleId(world), name: 'manager', permissions: MANAGE_CHANNELS.toString(), position: 1, color: 0 },
      ...world.bots.map((member, index) => botRoleJson(member, index + 2)),
      // The roles people were given beyond those (no permissions of their own), each once.
      ...[...new Set(world.humans.flatMap((human) => human.roles))].map((id, index) => ({
        id,
        name: `role-${id}`,
        permissions: '0',
        position: world.bots.length + 2 + index,
        color: 0,
      })),
    ],
    emojis: [],
    stickers: [],
    channels: [...world.channels.values()]
      .filter((channel) => channel.type !== ChannelType.DM)
      .map((channel) => channelJson(world, channel)),
    threads: [],
    members: members.map((user) => memberJson(world, user, true)),
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

export function messageJson(world: World, message: FakeMessage, options: { gateway: boolean; nested?: boolean }): Json {
  const channel = world.channels.get(message.channelId);
  const author = world.user(message.authorId);
  const inGuild = channel?.type !== ChannelType.DM;
  const mentions = message.mentionIds
    .map((id) => world.user(id))
    .filter((user): user is FakeUser => user !== undefined)
    .map((user) => ({ ...userJson(user), ...(inGuild ? { member: memberJson(world, user, false) } : {}) }));
  const json: Json = {
    id: message.id,
    type: message.replyTo ? 19 : 0,
    channel_id: message.channelId,
    author: author ? userJson(author) : { id: message.authorId, username: 'unknown', discriminator: '0' },
    content: message.content,
    timestamp: new Date(message.createdAt).toISOString(),
    edited_timestamp: message.editedAt ? new Date(message.editedAt).toISOString() : null,
    tts: false,
    mention_everyone: false,
    mentions,
    mention_roles: world.roleMentionsIn(message.content),
    attachments: message.attachments.map(attachmentJson),
    embeds: message.embeds,
    pinned: false,
    // A forward carries HAS_SNAPSHOT (1 << 14).
    flags: message.forwarded ? 1 << 14 : 0,
    components: message.components,
    ...(message.replyTo
      ? {
          message_reference: { type: 0, message_id: message.replyTo, channel_id: message.channelId },
          // Discord sends the replied-to message along, one level deep (null once it is deleted).
          ...(options.nested ? {} : { referenced_message: referencedJson(world, message.replyTo) }),
        }
      : {}),
    ...(message.forwarded
      ? {
          message_reference: {
            type: 1,
            message_id: message.forwarded.messageId,
            channel_id: message.forwarded.channelId,
            guild_id: world.guildId,
          },
          message_snapshots: [snapshotJson(world, message.forwarded)],
        }
      : {}),
  };
  if (options.gateway) {
    // Gateway-only fields: discord.js drops a DM without channel_type, and guild messages carry the member.
    json.channel_type = channel?.type ?? ChannelType.GuildText;
    if (message.nonce) json.nonce = message.nonce;
    if (inGuild) {
      json.guild_id = world.guildId;
      if (author) json.member = memberJson(world, author, false);
    }
  }
  return json;
}

function referencedJson(world: World, id: string): Json | null {
  const replied = world.message(id);
  return replied ? messageJson(world, replied, { gateway: false, nested: true }) : null;
}

/** An attachment object: a file behind a signed CDN link. */
function attachmentJson(file: FakeAttachment): Json {
  return {
    id: file.id,
    filename: file.filename,
    size: file.content.byteLength,
    url: file.url,
    proxy_url: file.url.replace('/attachments/', '/media/attachments/'),
    content_type: file.contentType,
    content_scan_version: 0,
  };
}

/** A forward's `message_snapshots` entry: the original's content, files, embeds and mentions, without author or id. */
function snapshotJson(world: World, snapshot: ForwardSnapshot): Json {
  return {
    message: {
      type: 0,
      content: snapshot.content,
      embeds: snapshot.embeds,
      attachments: snapshot.attachments.map(attachmentJson),
      timestamp: new Date(snapshot.createdAt).toISOString(),
      edited_timestamp: null,
      flags: 0,
      mentions: snapshot.mentionIds
        .map((id) => world.user(id))
        .filter((user): user is FakeUser => user !== undefined)
        .map(userJson),
      mention_roles: [],
      components: [],
    },
  };
}

/** Permissions string sent with an interaction for its member. */
export function permissionsOf(user: FakeUser): string {
  return memberPermissions(user).toString();
}
