import type { FakeApp, FakeMessage } from './types.js';
import type { Workspace } from './workspace.js';

/** What the Web API methods need from the running fake. */
export interface WebApiHost {
  readonly workspace: Workspace;
  /** Fans a new message out to the apps in its conversation. */
  publish(message: FakeMessage): void;
  /** Tells the apps in the conversation that a message was edited. */
  publishChanged(message: FakeMessage, previousText: string): void;
  /** Tells the apps in the conversation that a message was deleted. */
  publishDeleted(message: FakeMessage): void;
  /** The Socket Mode URL for one new connection of an app. */
  socketUrl(app: FakeApp): string;
  /** The page size conversations.history and conversations.replies give for an asked `limit`. */
  readPageSize(asked: number): number;
}

export interface ApiResult {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers?: Record<string, string>;
}

const ok = (body: Record<string, unknown> = {}): ApiResult => ({ status: 200, body: { ok: true, ...body } });
const fail = (error: string): ApiResult => ({ status: 200, body: { ok: false, error } });

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * The Web API methods Bolt and the adapter call. `caller` is the app whose token
 * came with the request (bot token, or app token for `apps.connections.open`).
 */
export function callWebApi(
  host: WebApiHost,
  method: string,
  args: Record<string, unknown>,
  caller: FakeApp | undefined,
  token: string | undefined,
): ApiResult {
  const ws = host.workspace;
  if (!caller) return fail(token ? 'invalid_auth' : 'not_authed');
  const usedAppToken = token === caller.appToken;
  if (method === 'apps.connections.open') {
    return usedAppToken ? ok({ url: host.socketUrl(caller) }) : fail('not_allowed_token_type');
  }
  if (usedAppToken) return fail('not_allowed_token_type');

  switch (method) {
    case 'auth.test':
      return ok({
        url: 'https://fake.slack.test/',
        team: 'Fake Workspace',
        user: caller.name,
        team_id: ws.teamId,
        user_id: caller.botUserId,
        bot_id: caller.botId,
        is_enterprise_install: false,
      });
    case 'chat.postMessage': {
      const channel = ws.channels.get(str(args.channel) ?? '');
      if (!channel) return fail('channel_not_found');
      if (!channel.members.has(caller.botUserId)) return fail('not_in_channel');
      const text = str(args.text);
      if (!text) return fail('no_text');
      const threadTs = str(args.thread_ts);
      if (threadTs && !ws.findMessage(channel.id, threadTs)) return fail('thread_not_found');
      const blocks = blocksOf(args.blocks);
      if (blocks === 'invalid') return fail('invalid_blocks');
      const message = ws.addMessage({
        channel: channel.id,
        text,
        user: caller.botUserId,
        threadTs,
        botId: caller.botId,
        appId: caller.appId,
        via: 'chat.postMessage',
        ...(blocks ? { blocks } : {}),
      });
      host.publish(message);
      return ok({ channel: channel.id, ts: message.ts, message: ws.historyItem(message) });
    }
    case 'chat.postEphemeral': {
      // Shown to `user` alone, if they are in the conversation; kept nowhere Slack's API can read back.
      const channel = ws.channels.get(str(args.channel) ?? '');
      if (!channel) return fail('channel_not_found');
      if (!channel.members.has(caller.botUserId)) return fail('not_in_channel');
      const user = str(args.user) ?? '';
      if (!channel.members.has(user)) return fail('user_not_in_channel');
      const text = str(args.text);
      if (!text) return fail('no_text');
      const threadTs = str(args.thread_ts);
      ws.ephemerals.push({ channel: channel.id, user, text, ...(threadTs ? { threadTs } : {}), by: caller.botUserId });
      return ok({ message_ts: `${Math.floor(Date.now() / 1000)}.000000` });
    }
    case 'chat.update': {
      const message = ws.findMessage(str(args.channel) ?? '', str(args.ts) ?? '');
      if (!message) return fail('message_not_found');
      if (message.botId !== caller.botId) return fail('cant_update_message');
      const blocks = blocksOf(args.blocks);
      if (blocks === 'invalid') return fail('invalid_blocks');
      const previous = message.text;
      message.text = str(args.text) ?? message.text;
      if (blocks) message.blocks = blocks;
      message.edited = true;
      host.publishChanged(message, previous);
      return ok({ channel: message.channel, ts: message.ts, text: message.text });
    }
    case 'chat.delete': {
      const message = ws.findMessage(str(args.channel) ?? '', str(args.ts) ?? '');
      if (!message) return fail('message_not_found');
      if (message.botId !== caller.botId) return fail('cant_delete_message');
      ws.removeMessage(message);
      host.publishDeleted(message);
      return ok({ channel: message.channel, ts: message.ts });
    }
    case 'usergroups.list': {
      // Slack answers with every group of the workspace; `users` only with include_users (the scope usergroups:read).
      ws.userGroupCalls += 1;
      const withUsers = args.include_users === true || args.include_users === 'true';
      return ok({
        usergroups: [...ws.userGroups].map(([id, g]) => ({
          id,
          team_id: ws.teamId,
          handle: g.handle,
          name: g.handle,
          user_count: g.users.size,
          ...(withUsers ? { users: [...g.users] } : {}),
        })),
      });
    }
    case 'users.info': {
      const user = ws.userObject(str(args.user) ?? '');
      return user ? ok({ user }) : fail('user_not_found');
    }
    case 'conversations.info': {
      const channel = ws.channels.get(str(args.channel) ?? '');
      return channel ? ok({ channel: ws.channelObject(channel) }) : fail('channel_not_found');
    }
    case 'conversations.open': {
      const user = str(args.users) ?? '';
      if (!ws.userObject(user)) return fail('user_not_found');
      return ok({ channel: ws.channelObject(ws.dm(caller, user)) });
    }
    case 'conversations.list': {
      const channels = [...ws.channels.values()].filter(
        (c) => (c.type === 'channel' || c.type === 'group') && c.members.has(caller.botUserId),
      );
      return ok({ channels: channels.map((c) => ws.channelObject(c)), response_metadata: { next_cursor: '' } });
    }
    case 'conversations.members': {
      const channel = ws.channels.get(str(args.channel) ?? '');
      if (!channel) return fail('channel_not_found');
      if (!channel.members.has(caller.botUserId)) return fail('not_in_channel');
      return ok({ members: [...channel.members], response_metadata: { next_cursor: '' } });
    }
    case 'conversations.history': {
      const channel = ws.channels.get(str(args.channel) ?? '');
      if (!channel) return fail('channel_not_found');
      if (!channel.members.has(caller.botUserId)) return fail('not_in_channel');
      const inclusive = str(args.inclusive) === 'true' || args.inclusive === true;
      const oldest = Number(str(args.oldest) ?? '0');
      const latest = Number(str(args.latest) ?? 'Infinity');
      // Newest first, top-level messages and thread parents only, like Slack; `cursor` pages further back.
      const items = ws.messages
        .filter((m) => m.channel === channel.id && (!m.threadTs || m.threadTs === m.ts))
        .filter((m) => within(Number(m.ts), oldest, latest, inclusive))
        .reverse();
      return page(ws, items, args, host.readPageSize(Number(str(args.limit) ?? '100')));
    }
    case 'conversations.replies': {
      const channel = ws.channels.get(str(args.channel) ?? '');
      if (!channel) return fail('channel_not_found');
      if (!channel.members.has(caller.botUserId)) return fail('not_in_channel');
      const ts = str(args.ts) ?? '';
      const inclusive = str(args.inclusive) === 'true' || args.inclusive === true;
      const oldest = Number(str(args.oldest) ?? '0');
      const latest = Number(str(args.latest) ?? 'Infinity');
      const thread = ws.messages.filter((m) => m.channel === channel.id && (m.ts === ts || m.threadTs === ts));
      if (thread.length === 0) return fail('thread_not_found');
      // Oldest first, the parent always first (whatever the bounds), like Slack.
      const items = thread.filter((m) => m.ts === ts || within(Number(m.ts), oldest, latest, inclusive));
      return page(ws, items, args, host.readPageSize(Number(str(args.limit) ?? '1000')));
    }
    default:
      return fail('unknown_method');
  }
}

/**
 * A message's `blocks` (a JSON string in a form post, an array in a JSON one) as Slack checks them: at most 50; a
 * section's text at most 3000 characters; an actions block of at most 25 elements, each button with plain_text of at
 * most 75 characters, an action_id (at most 255, unique in the message) and a value of at most 2000. Anything else
 * is `invalid_blocks`. Undefined: no blocks.
 */
function blocksOf(raw: unknown): Record<string, unknown>[] | 'invalid' | undefined {
  if (raw === undefined || raw === '') return undefined;
  let blocks: unknown;
  try {
    blocks = typeof raw === 'string' ? JSON.parse(raw) : raw;
  } catch {
    return 'invalid';
  }
  if (!Array.isArray(blocks) || blocks.length > 50) return 'invalid';
  const actionIds = new Set<string>();
  for (const block of blocks as Array<Record<string, unknown>>) {
    if (block?.type === 'section') {
      const text = block.text as { type?: unknown; text?: unknown } | undefined;
      if (typeof text?.text !== 'string' || text.text.length === 0 || text.text.length > 3000) return 'invalid';
    } else if (block?.type === 'actions') {
      const elements = block.elements as Array<Record<string, unknown>> | undefined;
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25) return 'invalid';
      for (const element of elements) {
        const label = element.text as { type?: unknown; text?: unknown } | undefined;
        const id = element.action_id;
        if (element.type !== 'button' || label?.type !== 'plain_text' || typeof label.text !== 'string')
          return 'invalid';
        if (label.text.length > 75 || typeof id !== 'string' || id.length > 255 || actionIds.has(id)) return 'invalid';
        if (element.value !== undefined && (typeof element.value !== 'string' || element.value.length > 2000)) {
          return 'invalid';
        }
        actionIds.add(id);
      }
    } else {
      return 'invalid';
    }
  }
  return blocks as Record<string, unknown>[];
}

function within(ts: number, oldest: number, latest: number, inclusive: boolean): boolean {
  return inclusive ? ts >= oldest && ts <= latest : ts > oldest && ts < latest;
}

/** One page of `items` from the cursor (an offset, base64 as Slack's cursors look), with the next cursor. */
function page(ws: Workspace, items: FakeMessage[], args: Record<string, unknown>, size: number): ApiResult {
  const cursor = str(args.cursor);
  const from = cursor
    ? Number(
        Buffer.from(cursor, 'base64')
          .toString('utf8')
          .replace(/^next_ts:/, ''),
      )
    : 0;
  const slice = items.slice(from, from + Math.max(1, size));
  const more = from + slice.length < items.length;
  return ok({
    messages: slice.map((m) => ws.historyItem(m)),
    has_more: more,
    response_metadata: { next_cursor: more ? Buffer.from(`next_ts:${from + slice.length}`).toString('base64') : '' },
  });
}
