/**
 * Slack `message` / `app_mention` events → the router's Inbound, as a pure function: which messages the router
 * sees, who wrote them, which room they belong to, and their text in the core's plain form. The adapter first
 * makes sure the directory knows every user named (`userIdsToLearn`), then calls `toInbound`.
 */
import type { Inbound, InboundFile } from '../../src/ports.js';
import { personName } from '../shared/mention-name.js';
import { withShared } from '../shared/quote.js';
import { mentionedUserIds, type NameOf, slackToPlain } from './inbound-text.js';
import { roomOfMessage } from './rooms.js';

export const SLACK = 'slack';

/** The fields of a Slack `message` / `app_mention` event the adapter reads. */
export interface SlackMessageEvent {
  readonly type: string;
  readonly subtype?: string;
  readonly channel: string;
  readonly channel_type?: string;
  readonly user?: string;
  readonly bot_id?: string;
  readonly app_id?: string;
  readonly username?: string;
  readonly bot_profile?: { readonly name?: string };
  readonly text?: string;
  readonly ts: string;
  readonly thread_ts?: string;
  /** In a thread reply: who posted the thread's parent message. */
  readonly parent_user_id?: string;
  readonly team?: string;
  /** `message_changed`: the message as it is now (with `edited` when someone edited it), and as it was. */
  readonly message?: ChangedMessage;
  /** Legacy attachments: a shared message (`is_share`) or an unfurled message link (`is_msg_unfurl`) among them. */
  readonly attachments?: readonly SlackAttachment[];
  /** Files shared with the message (subtype `file_share`). */
  readonly files?: readonly SlackFile[];
}

/** The fields of a shared file the adapter reads. */
export interface SlackFile {
  readonly id: string;
  readonly name?: string;
  readonly title?: string;
  readonly mimetype?: string;
  readonly size?: number;
  readonly url_private?: string;
  readonly url_private_download?: string;
  /** `check_file_info` (and no URLs) when Slack shares only the file's id, as in some Slack Connect channels. */
  readonly file_access?: string;
  /** `tombstone` for a deleted file, `hidden_by_limit` beyond a free workspace's limit. */
  readonly mode?: string;
}

/** The message inside `message_changed`: a message event without its channel, plus who edited it when. */
export type ChangedMessage = Omit<SlackMessageEvent, 'channel' | 'message'> & {
  readonly edited?: { readonly user?: string; readonly ts: string };
};

/** The fields of a message attachment the adapter reads. */
export interface SlackAttachment {
  readonly is_share?: boolean;
  readonly is_msg_unfurl?: boolean;
  readonly text?: string;
  readonly fallback?: string;
  readonly author_id?: string;
  readonly author_name?: string;
  readonly author_subname?: string;
}

/** Slackbot's user id: its notices (in an app's DM too) are not someone talking to the agents. */
export const SLACKBOT = 'USLACKBOT';

/** One of our agents' apps, as Slack stamps its messages. */
export interface OurApp {
  readonly agent: string;
  readonly botId: string;
  readonly botUserId: string;
}

export interface SlackInboundContext {
  readonly apps: readonly OurApp[];
  /** The agent whose app received the event (a DM belongs to it). */
  readonly receiver: string;
  /** A user's `@name` as the core sees it, when the directory knows them. */
  readonly nameOf: NameOf;
  /** SLACK_ALLOWED_BOTS, lower-cased: bot ids, user ids, app ids or names of foreign bots the agents hear. */
  readonly allowedBots: ReadonlySet<string>;
  /** SLACK_REPLY_IN_THREAD: a top-level channel message starts a thread room of its own. */
  readonly replyInThread: boolean;
  /** Makes a shared file downloadable (through the app that received it); without it, files are left out. */
  readonly fileOf?: (file: SlackFile) => InboundFile;
}

/** Subtypes that are still someone writing a new message; edits, joins, deletions etc. are not. */
const NEW_MESSAGE_SUBTYPES = new Set(['bot_message', 'file_share', 'thread_broadcast', 'me_message']);

/** The agent app that posted `event`, if it is one of ours. */
export function ourApp(event: SlackMessageEvent, apps: readonly OurApp[]): OurApp | undefined {
  return apps.find(
    (app) => (event.bot_id !== undefined && app.botId === event.bot_id) || (event.user && app.botUserId === event.user),
  );
}

/** Attachments that carry another message: a share, or a message link Slack unfurled. */
function sharedMessages(event: SlackMessageEvent): SlackAttachment[] {
  return (event.attachments ?? []).filter((attachment) => attachment.is_share || attachment.is_msg_unfurl);
}

/** The users whose names the conversion needs: the author (a human) and everyone mentioned, in shares too. */
export function userIdsToLearn(event: SlackMessageEvent, apps: readonly OurApp[]): string[] {
  if (event.subtype === 'message_changed') {
    return event.message ? userIdsToLearn({ ...event.message, channel: event.channel }, apps) : [];
  }
  if (event.user === SLACKBOT) return [];
  const author = event.user && !ourApp(event, apps) ? [event.user] : [];
  const shared = sharedMessages(event).flatMap((attachment) => mentionedUserIds(attachment.text ?? ''));
  return [...new Set([...author, ...mentionedUserIds(event.text ?? ''), ...shared])];
}

/** A foreign bot is heard only when SLACK_ALLOWED_BOTS names its bot id, user id, app id or name. */
function allowedBot(event: SlackMessageEvent, allowed: ReadonlySet<string>): boolean {
  const names = [event.bot_id, event.user, event.app_id, event.bot_profile?.name, event.username];
  return names.some((name) => name !== undefined && allowed.has(name.toLowerCase()));
}

const ms = (ts: string) => Math.round(Number(ts) * 1000);

/** Converts an event for the router, or returns null when the router must not see it. */
export function toInbound(event: SlackMessageEvent, context: SlackInboundContext): Inbound | null {
  if (event.subtype === 'message_changed') return editToInbound(event, context);
  if (!event.channel || !event.ts) return null;
  if (event.subtype && !NEW_MESSAGE_SUBTYPES.has(event.subtype)) return null;
  if (event.user === SLACKBOT) return null;
  const ours = ourApp(event, context.apps);
  const isBot = !ours && (event.bot_id !== undefined || event.subtype === 'bot_message');
  if (isBot && !allowedBot(event, context.allowedBots)) return null;
  if (!ours && !isBot && !event.user) return null;

  // Nobody but our agents is shown or mentioned under an agent's name (the directory names the people it knows so).
  const isAgentName = (name: string) => context.apps.some((app) => app.agent.toLowerCase() === name.toLowerCase());
  let author: Inbound['author'];
  if (ours) {
    author = { id: ours.botUserId, name: ours.agent, kind: 'agent' };
  } else if (isBot) {
    // An allowlisted bot may talk to the agents but gets no agent rights: it counts as a human.
    const label = event.bot_profile?.name ?? event.username ?? (event.user && context.nameOf(event.user));
    author = { id: event.bot_id ?? event.user ?? 'bot', name: personName(label || 'bot', isAgentName), kind: 'human' };
  } else {
    const id = event.user ?? '';
    author = { id, name: context.nameOf(id) ?? id, kind: 'human' };
  }

  const isDm = event.channel_type === 'im' || event.channel.startsWith('D');
  // A thread's parent carries its own ts as thread_ts once it has replies: it still belongs where it was posted.
  const threadTs = event.thread_ts !== event.ts ? event.thread_ts : undefined;
  const room = roomOfMessage(
    { channel: event.channel, ts: event.ts, threadTs, isDm, byOurAgent: Boolean(ours) },
    context.replyInThread,
  );
  // A human's reply in a thread whose parent one of our agents posted addresses that agent. Slack names the
  // parent's author on every thread reply (`parent_user_id`), so this costs no lookup. An agent's reply asks nothing.
  const parent =
    author.kind === 'human' && threadTs
      ? context.apps.find((app) => app.botUserId === event.parent_user_id)?.agent
      : undefined;
  const shared = sharedMessages(event).map((attachment) => ({
    author: attachment.author_name ?? attachment.author_subname,
    text: slackToPlain(attachment.text || attachment.fallback || '', context.nameOf, isAgentName),
  }));
  const text = withShared(slackToPlain(event.text ?? '', context.nameOf, isAgentName), shared);
  const fileOf = context.fileOf;
  const files = fileOf ? (event.files ?? []).filter((file) => file.mode !== 'tombstone').map(fileOf) : [];
  // An upload without a comment is still a message: its files are what it says.
  if (!text && files.length === 0) return null;
  return {
    platform: SLACK,
    channel: room,
    messageId: event.ts,
    author,
    text,
    ...(isDm ? { direct: { agent: context.receiver } } : {}),
    ...(parent ? { addressed: [parent] } : {}),
    ...(files.length > 0 ? { files } : {}),
    at: ms(event.ts),
  };
}

/**
 * A `message_changed` event: a person's edit, as an Inbound of its own (`<ts>:edit:<edited ts>`) marked as an
 * edit of the message. Changes nobody made (a link unfurling, our own streamed replies) are not edits.
 */
function editToInbound(event: SlackMessageEvent, context: SlackInboundContext): Inbound | null {
  const now = event.message;
  if (!now?.edited || !event.channel) return null;
  const where = { channel: event.channel, ...(event.channel_type ? { channel_type: event.channel_type } : {}) };
  const inbound = toInbound({ ...now, ...where }, context);
  if (inbound?.author.kind !== 'human') return null;
  const { files: _unchanged, ...edited } = inbound; // an edit shares no new files
  if (!edited.text) return null;
  return {
    ...edited,
    messageId: `${now.ts}:edit:${now.edited.ts}`,
    edit: { of: now.ts, originalAt: ms(now.ts) },
    at: ms(now.edited.ts),
  };
}
