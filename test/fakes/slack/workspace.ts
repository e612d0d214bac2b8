import type { ChannelType, FakeApp, FakeChannel, FakeFile, FakeHuman, FakeMessage } from './types.js';

/** Ids in Slack's shapes, unique within one fake workspace. */
class IdMaker {
  private next = 1;
  make(prefix: string): string {
    return `${prefix}${String(this.next++).padStart(8, '0')}`;
  }
}

/**
 * The workspace's state: apps, humans, conversations and messages, plus the event
 * payloads Slack would build for each app. No I/O here.
 */
export class Workspace {
  readonly teamId: string;
  readonly apps = new Map<string, FakeApp>();
  readonly humans = new Map<string, FakeHuman>();
  readonly channels = new Map<string, FakeChannel>();
  readonly messages: FakeMessage[] = [];
  /** Files humans uploaded, by id. */
  readonly files = new Map<string, FakeFile>();
  /** Messages removed with chat.delete, oldest first. */
  readonly deleted: FakeMessage[] = [];
  /** Lines shown to one person only (chat.postEphemeral): never in a conversation's history, never an event. */
  readonly ephemerals: Array<{ channel: string; user: string; text: string; threadTs?: string; by: string }> = [];
  private readonly ids = new IdMaker();
  /** User groups (`S…`), as `usergroups.list` with `include_users` returns them; `usergroups.list` calls made. */
  readonly userGroups = new Map<string, { handle: string; users: Set<string> }>();
  userGroupCalls = 0;
  private lastTs = 0;

  constructor(teamId = 'T0000FAKE') {
    this.teamId = teamId;
  }

  addApp(name: string): FakeApp {
    const app: FakeApp = {
      name,
      appId: this.ids.make('A'),
      botUserId: this.ids.make('U'),
      botId: this.ids.make('B'),
      botToken: `xoxb-fake-${name}-${this.ids.make('')}`,
      appToken: `xapp-fake-${name}-${this.ids.make('')}`,
      signingSecret: `secret-${name}-${this.ids.make('')}`,
      requestUrl: undefined,
    };
    this.apps.set(name, app);
    return app;
  }

  addHuman(name: string, displayName = name): FakeHuman {
    const human: FakeHuman = { id: this.ids.make('U'), name, displayName };
    this.humans.set(human.id, human);
    return human;
  }

  /** A user group (`@oncall`) of these user ids; its id. */
  addUserGroup(handle: string, users: readonly string[]): string {
    const id = this.ids.make('S');
    this.userGroups.set(id, { handle, users: new Set(users) });
    return id;
  }

  addChannel(name: string, members: readonly string[], type: ChannelType = 'channel'): FakeChannel {
    const prefix = type === 'channel' ? 'C' : type === 'im' ? 'D' : 'G';
    const channel: FakeChannel = { id: this.ids.make(prefix), name, type, members: new Set(members) };
    this.channels.set(channel.id, channel);
    return channel;
  }

  /** The DM conversation between a human and an app's bot user, created on first use. */
  dm(app: FakeApp, userId: string): FakeChannel {
    for (const channel of this.channels.values()) {
      if (channel.type === 'im' && channel.members.has(app.botUserId) && channel.members.has(userId)) return channel;
    }
    return this.addChannel(`dm-${app.name}-${userId}`, [app.botUserId, userId], 'im');
  }

  appByToken(token: string | undefined): FakeApp | undefined {
    if (!token) return undefined;
    for (const app of this.apps.values()) if (app.botToken === token || app.appToken === token) return app;
    return undefined;
  }

  appByBotUser(userId: string): FakeApp | undefined {
    for (const app of this.apps.values()) if (app.botUserId === userId) return app;
    return undefined;
  }

  /** Strictly increasing message timestamps in Slack's `seconds.micros` form. */
  nextTs(): string {
    const now = Date.now() * 1000;
    this.lastTs = Math.max(now, this.lastTs + 1);
    const seconds = Math.floor(this.lastTs / 1_000_000);
    const micros = this.lastTs % 1_000_000;
    return `${seconds}.${String(micros).padStart(6, '0')}`;
  }

  addMessage(message: Omit<FakeMessage, 'ts' | 'edited'>): FakeMessage {
    const stored: FakeMessage = { ...message, ts: this.nextTs(), edited: false };
    this.messages.push(stored);
    return stored;
  }

  /** Takes a message out of the conversation (chat.delete); `deleted` keeps it for inspection. */
  removeMessage(message: FakeMessage): void {
    const index = this.messages.indexOf(message);
    if (index >= 0) this.messages.splice(index, 1);
    this.deleted.push(message);
  }

  findMessage(channel: string, ts: string): FakeMessage | undefined {
    return this.messages.find((m) => m.channel === channel && m.ts === ts);
  }

  /** Apps whose bot user is a member of the channel, in creation order. */
  memberApps(channelId: string): FakeApp[] {
    const channel = this.channels.get(channelId);
    if (!channel) return [];
    return [...this.apps.values()].filter((app) => channel.members.has(app.botUserId));
  }

  /** The `message` event payload as Slack sends it. */
  messageEvent(message: FakeMessage): Record<string, unknown> {
    const channel = this.channels.get(message.channel);
    const event: Record<string, unknown> = {
      type: 'message',
      channel: message.channel,
      channel_type: channel?.type ?? 'channel',
      user: message.user,
      text: message.text,
      ts: message.ts,
      event_ts: message.ts,
      team: this.teamId,
    };
    if (message.threadTs) {
      event.thread_ts = message.threadTs;
      // Every thread reply names who posted the thread's parent.
      const parent = this.findMessage(message.channel, message.threadTs);
      if (parent && parent !== message) event.parent_user_id = parent.user;
    }
    if (message.attachments) event.attachments = message.attachments;
    if (message.blocks) event.blocks = message.blocks;
    if (message.subtype) event.subtype = message.subtype;
    if (message.files) {
      event.files = message.files;
      event.upload = false;
      event.display_as_bot = false;
    }
    if (message.botId) {
      event.bot_id = message.botId;
      event.app_id = message.appId;
      const app = [...this.apps.values()].find((a) => a.botId === message.botId);
      event.bot_profile = { id: message.botId, app_id: message.appId, name: app?.name ?? 'bot', team_id: this.teamId };
    }
    return event;
  }

  /** Stores an uploaded file and describes it as Slack's `files[]` entries do; `base` is the fake's address. */
  addFile(input: Omit<FakeFile, 'id'>, user: string, base: string): Record<string, unknown> {
    const file: FakeFile = { ...input, id: this.ids.make('F') };
    this.files.set(file.id, file);
    const created = Math.floor(Date.now() / 1000);
    const path = `/files-pri/${this.teamId}-${file.id}`;
    return {
      id: file.id,
      created,
      timestamp: created,
      name: file.name,
      title: file.name,
      mimetype: file.mimetype,
      filetype: file.name.split('.').pop() ?? 'binary',
      pretty_type: file.mimetype,
      user,
      user_team: this.teamId,
      editable: false,
      size: file.content.byteLength,
      mode: 'hosted',
      is_external: false,
      external_type: '',
      is_public: true,
      public_url_shared: false,
      display_as_bot: false,
      username: '',
      url_private: `${base}${path}/${encodeURIComponent(file.name)}`,
      url_private_download: `${base}${path}/download/${encodeURIComponent(file.name)}`,
      permalink: `https://fake.slack.test/files/${user}/${file.id}/${encodeURIComponent(file.name)}`,
      permalink_public: `https://slack-files.com/${this.teamId}-${file.id}-0a1b2c3d4e`,
      has_rich_preview: false,
      file_access: 'visible',
    };
  }

  /**
   * The attachment Slack adds when `original` is shared into another conversation ("Share message" / forward):
   * the original's text with its author, a fallback line and the permalink.
   */
  shareAttachment(original: FakeMessage): Record<string, unknown> {
    const channel = this.channels.get(original.channel);
    const author = this.humans.get(original.user);
    const name = author?.displayName ?? this.appByBotUser(original.user)?.name ?? original.user;
    const permalink = `https://fake.slack.test/archives/${original.channel}/p${original.ts.replace('.', '')}`;
    return {
      ts: original.ts,
      channel_id: original.channel,
      channel_name: channel?.name ?? '',
      is_share: true,
      color: 'D0D0D0',
      fallback: `[${new Date(Number(original.ts) * 1000).toUTCString()}] ${author?.name ?? name}: ${original.text}`,
      text: original.text,
      author_id: original.user,
      author_name: name,
      author_subname: name,
      author_link: `https://fake.slack.test/team/${original.user}`,
      mrkdwn_in: ['text'],
      id: 1,
      original_url: permalink,
      footer: `Posted in #${channel?.name ?? ''}`,
      from_url: permalink,
      private_channel_prompt: true,
    };
  }

  /** The `app_mention` event payload for a message that mentions an app's bot user. */
  appMentionEvent(message: FakeMessage): Record<string, unknown> {
    const { channel_type: _ignored, ...rest } = this.messageEvent(message);
    return { ...rest, type: 'app_mention' };
  }

  /** The `message_changed` event Slack sends after an edit made at `ts` (the same for every app). */
  changedEvent(message: FakeMessage, previousText: string, ts: string): Record<string, unknown> {
    const channel = this.channels.get(message.channel);
    const inner = this.messageEvent(message);
    return {
      type: 'message',
      subtype: 'message_changed',
      channel: message.channel,
      channel_type: channel?.type ?? 'channel',
      hidden: true,
      ts,
      event_ts: ts,
      message: { ...inner, edited: { user: message.user, ts } },
      previous_message: { ...inner, text: previousText },
    };
  }

  /** The `message_deleted` event Slack sends after chat.delete. */
  deletedEvent(message: FakeMessage): Record<string, unknown> {
    const channel = this.channels.get(message.channel);
    const ts = this.nextTs();
    return {
      type: 'message',
      subtype: 'message_deleted',
      channel: message.channel,
      channel_type: channel?.type ?? 'channel',
      hidden: true,
      ts,
      event_ts: ts,
      deleted_ts: message.ts,
      previous_message: this.messageEvent(message),
    };
  }

  /** The `channel_join` message Slack posts when someone joins. */
  joinEvent(channelId: string, userId: string): Record<string, unknown> {
    const ts = this.nextTs();
    return {
      type: 'message',
      subtype: 'channel_join',
      channel: channelId,
      channel_type: this.channels.get(channelId)?.type ?? 'channel',
      user: userId,
      text: `<@${userId}> has joined the channel`,
      ts,
      event_ts: ts,
    };
  }

  /** `users.info`'s `user` object for a human or a bot user. */
  userObject(userId: string): Record<string, unknown> | undefined {
    const human = this.humans.get(userId);
    if (human) {
      return {
        id: human.id,
        team_id: this.teamId,
        name: human.name,
        real_name: human.displayName,
        is_bot: false,
        deleted: false,
        profile: { display_name: human.displayName, real_name: human.displayName },
      };
    }
    const app = this.appByBotUser(userId);
    if (app) {
      return {
        id: app.botUserId,
        team_id: this.teamId,
        name: app.name,
        real_name: app.name,
        is_bot: true,
        deleted: false,
        profile: { display_name: app.name, real_name: app.name, bot_id: app.botId, api_app_id: app.appId },
      };
    }
    return undefined;
  }

  /** `conversations.info`'s `channel` object. */
  channelObject(channel: FakeChannel): Record<string, unknown> {
    const other = channel.type === 'im' ? [...channel.members].find((m) => this.humans.has(m)) : undefined;
    return {
      id: channel.id,
      name: channel.name,
      is_channel: channel.type === 'channel',
      is_group: channel.type === 'group',
      is_im: channel.type === 'im',
      is_mpim: channel.type === 'mpim',
      is_private: channel.type !== 'channel',
      is_member: true,
      ...(other ? { user: other } : {}),
    };
  }

  /** A stored message as `conversations.history` returns it. */
  historyItem(message: FakeMessage): Record<string, unknown> {
    const { channel: _c, channel_type: _t, event_ts: _e, ...rest } = this.messageEvent(message);
    // A thread's parent carries the thread's counts, as Slack sends them.
    const replies = this.messages.filter(
      (m) => m.channel === message.channel && m.threadTs === message.ts && m !== message,
    );
    if (replies.length === 0) return rest;
    return {
      ...rest,
      thread_ts: message.ts,
      reply_count: replies.length,
      reply_users_count: new Set(replies.map((m) => m.user)).size,
      reply_users: [...new Set(replies.map((m) => m.user))].slice(0, 5),
      latest_reply: replies.at(-1)?.ts,
      is_locked: false,
      subscribed: false,
    };
  }
}
