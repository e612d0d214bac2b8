/** One discord.js Client per agent identity, with the intents the bridge needs and deliberately small caches. */
import {
  ChannelType,
  Client,
  GatewayIntentBits,
  Options,
  Partials,
  PermissionFlagsBits,
  type RESTOptions,
} from 'discord.js';

export interface ClientSettings {
  /** REST base without the version (`https://discord.com/api` by default); DISCORD_API_URL overrides it. */
  readonly api?: string | undefined;
  /** Extra REST options (tests raise `globalRequestsPerSecond` against the local fake). */
  readonly rest?: Partial<RESTOptions> | undefined;
}

/**
 * Intents: guilds and their messages, message content (privileged: enable it for each bot in the developer
 * portal), DMs; partial channels so a DM arrives before its channel is cached. Messages are never cached (the
 * store is the history), members and users only a few, so each extra identity stays small.
 */
export function createClient(settings: ClientSettings): Client {
  return new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.DirectMessages,
    ],
    partials: [Partials.Channel],
    rest: { ...(settings.api ? { api: settings.api } : {}), ...settings.rest },
    makeCache: Options.cacheWithLimits({
      MessageManager: 0,
      ReactionManager: 0,
      ReactionUserManager: 0,
      PresenceManager: 0,
      VoiceStateManager: 0,
      GuildEmojiManager: 0,
      GuildStickerManager: 0,
      GuildScheduledEventManager: 0,
      GuildInviteManager: 0,
      GuildBanManager: 0,
      StageInstanceManager: 0,
      ThreadMemberManager: 0,
      AutoModerationRuleManager: 0,
      ApplicationCommandManager: 0,
      BaseGuildEmojiManager: 0,
      GuildMessageManager: 0,
      DMMessageManager: 0,
      GuildMemberManager: { maxSize: 100, keepOverLimit: (member) => member.id === member.client.user.id },
      UserManager: { maxSize: 100, keepOverLimit: (user) => user.id === user.client.user.id },
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      users: { interval: 3600, filter: () => (user) => user.id !== user.client.user.id },
    },
    // Replies never ping @everyone, roles or the replied-to author; user mentions written in the text do.
    allowedMentions: { parse: ['users'], repliedUser: false },
  });
}

/** The guild text channels (and announcement channels) a bot can see. */
export function textChannels(client: Client): Array<{ readonly id: string; readonly name: string }> {
  const found: Array<{ id: string; name: string }> = [];
  for (const channel of client.channels.cache.values()) {
    if (channel.type === ChannelType.GuildText || channel.type === ChannelType.GuildAnnouncement) {
      found.push({ id: channel.id, name: channel.name });
    }
  }
  return found;
}

/** `#name`, a name, `<#id>` or an id of a text channel one of the bots can see; undefined when none is. */
export function findTextChannel(clients: readonly Client[], reference: string): string | undefined {
  const ref = reference.trim().replace(/^<#(\d+)>$/, '$1');
  if (/^\d+$/.test(ref)) return ref;
  const name = ref.replace(/^#/, '').toLowerCase();
  for (const client of clients) {
    const channel = textChannels(client).find((c) => c.name.toLowerCase() === name);
    if (channel) return channel.id;
  }
  return undefined;
}

/**
 * Whether a member of the server could post in a channel (View Channel and Send Messages there, by their roles and the
 * channel's overwrites), as the first bot that sees the channel reads it; undefined when none can tell.
 */
export async function memberMayPost(
  clients: readonly Client[],
  channelId: string,
  userId: string,
): Promise<boolean | undefined> {
  for (const client of clients) {
    const channel = client.channels.cache.get(channelId);
    if (!channel || !('guild' in channel) || !('permissionsFor' in channel)) continue;
    try {
      const member = await channel.guild.members.fetch(userId);
      return (
        channel.permissionsFor(member)?.has([PermissionFlagsBits.ViewChannel, PermissionFlagsBits.SendMessages]) ??
        undefined
      );
    } catch {
      return false; // not a member of the server
    }
  }
  return undefined;
}

/**
 * A member's role ids as the bots' caches know them (the server's member list, and every message's member): what a
 * message fetched by a catch-up, which comes without its author's member, is read with.
 */
export function cachedRoles(clients: readonly Client[], userId: string): readonly string[] | undefined {
  for (const client of clients) {
    for (const guild of client.guilds.cache.values()) {
      const member = guild.members.cache.get(userId) as unknown as { _roles?: readonly string[] } | undefined;
      if (member?._roles) return member._roles;
    }
  }
  return undefined;
}

/** Whether two people share a server one of the bots is in (there, Discord lets them write to each other). */
export async function shareServer(
  clients: readonly Client[],
  a: string,
  b: string | undefined,
): Promise<boolean | undefined> {
  if (b === undefined) return undefined; // a name the directory does not know
  for (const client of clients) {
    for (const guild of client.guilds.cache.values()) {
      const [first, second] = await Promise.all([
        guild.members.fetch(a).catch(() => undefined),
        guild.members.fetch(b).catch(() => undefined),
      ]);
      if (first && second) return true;
    }
  }
  return false;
}

/** A role's name by id, from the bots' guild caches (for `<@&id>` of roles that are not our bots'). */
export function roleName(clients: readonly Client[], id: string): string | undefined {
  for (const client of clients) {
    for (const guild of client.guilds.cache.values()) {
      const role = guild.roles.cache.get(id);
      if (role) return role.name;
    }
  }
  return undefined;
}

/** A channel's name by id, from the bots' caches (ACCESS_CHANNELS' #names). */
export function channelName(clients: readonly Client[], id: string): string | undefined {
  for (const client of clients) {
    const channel = client.channels.cache.get(id);
    if (channel && 'name' in channel && channel.name) return channel.name;
  }
  return undefined;
}
