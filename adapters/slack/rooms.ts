import type { webApi } from '@slack/bolt';

/**
 * Room ids on Slack: a conversation id (`C…`, `G…`, `D…`), or `C…/thread_ts` for a
 * thread, which is a room of its own (own history, own turn counter).
 */
export interface SlackRoom {
  readonly channel: string;
  readonly threadTs: string | undefined;
}

export function roomId(channel: string, threadTs?: string): string {
  return threadTs ? `${channel}/${threadTs}` : channel;
}

export function parseRoom(id: string): SlackRoom {
  const slash = id.indexOf('/');
  if (slash < 0) return { channel: id, threadTs: undefined };
  return { channel: id.slice(0, slash), threadTs: id.slice(slash + 1) || undefined };
}

/**
 * The room a message belongs to. In a thread: the thread. A top-level message in a
 * channel starts a thread of its own when replies go in threads, except our agents'
 * own top-level posts, which were made to the channel room and belong to it. DMs are
 * never threaded by us.
 */
export function roomOfMessage(
  message: { channel: string; ts: string; threadTs: string | undefined; isDm: boolean; byOurAgent: boolean },
  replyInThread: boolean,
): string {
  if (message.threadTs) return roomId(message.channel, message.threadTs);
  if (message.isDm || message.byOurAgent || !replyInThread) return message.channel;
  return roomId(message.channel, message.ts);
}

/** `#name`, `<#C123|name>` or a channel id, among the channels one of the apps is in; undefined when none is. */
export async function findChannel(
  identities: ReadonlyArray<{ readonly client: webApi.WebClient }>,
  reference: string,
): Promise<string | undefined> {
  const ref = reference.trim();
  const linked = /^<#([A-Z0-9]+)(?:\|[^>]*)?>$/.exec(ref);
  if (linked) return linked[1];
  if (/^[CG][A-Z0-9]{6,}$/.test(ref)) return ref;
  const name = ref.replace(/^#/, '').toLowerCase();
  for (const identity of identities) {
    const list = await identity.client.conversations.list({ types: 'public_channel,private_channel', limit: 1000 });
    const found = list.channels?.find((c) => c.name?.toLowerCase() === name);
    if (found?.id) return found.id;
  }
  return undefined;
}

/**
 * Whether a person is a member of a channel (conversations.members, read by the first app in it, at most 10 pages of
 * 1,000): in Slack a member may post. Undefined when no app can read the channel's members.
 */
export async function isMember(
  identities: ReadonlyArray<{ readonly client: webApi.WebClient }>,
  channel: string,
  userId: string,
): Promise<boolean | undefined> {
  for (const identity of identities) {
    try {
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const got = await identity.client.conversations.members({
          channel,
          limit: 1000,
          ...(cursor ? { cursor } : {}),
        });
        if (got.members?.includes(userId)) return true;
        cursor = got.response_metadata?.next_cursor || undefined;
        if (!cursor) return false;
      }
      return undefined;
    } catch {
      // This app is not in the channel (not_in_channel): another may be.
    }
  }
  return undefined;
}

/**
 * Whether two people share a channel one of the apps is in: the channel given first (where the request was made),
 * then the apps' channels (the first page of each app's list). Undefined when no app can read members.
 */
export async function shareChannel(
  identities: ReadonlyArray<{ readonly client: webApi.WebClient }>,
  a: string,
  b: string | undefined,
  first: string | undefined,
): Promise<boolean | undefined> {
  if (b === undefined) return undefined; // a name the directory does not know
  const both = async (channel: string) =>
    (await isMember(identities, channel, a)) === true && (await isMember(identities, channel, b)) === true;
  if (first && !first.startsWith('D') && (await both(first))) return true;
  for (const identity of identities) {
    const list = await identity.client.conversations
      .list({ types: 'public_channel,private_channel', limit: 200 })
      .catch(() => undefined);
    for (const channel of list?.channels ?? []) if (channel.id && (await both(channel.id))) return true;
  }
  return false;
}
