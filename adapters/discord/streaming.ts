/**
 * DISCORD_STREAM=edit: a reply shown through the agent's bot while it is written (posted once, then edited), and
 * the wait its echoes need — the bot's own messages in that room reach the bridge only once the reply is finished
 * (they are then among its ids) or removed (a removed partial is dropped).
 */
import { type Client, Routes } from 'discord.js';
import type { Logger } from '../../src/log.js';
import type { Posted, StreamingPost } from '../../src/ports.js';
import type { ReplyPoster } from '../shared/reply-posting.js';
import { EditStream, type StreamClock } from '../shared/streaming-post.js';
import { discordTarget } from './posting.js';

/** Mentions only users named in the text: never @everyone, roles, or the author of a replied-to message. */
export const ALLOWED_MENTIONS = { parse: ['users'], replied_user: false };
/** A reply still being written pings no one (edits never ping, so a mention would ping a partial text). */
const NO_MENTIONS = { parse: [] };

/** A user or bot mention, which pings only when the message is created. */
const USER_MENTION = /<@!?\d+>/;

/** Where a streamed reply goes and how its text reads. */
export interface StreamPlace {
  readonly client: Client;
  readonly channel: string;
  /** The bot's user id (its agent's name before the bot is known): its messages there wait for the reply. */
  readonly bot: string;
  /** The reply's text as Discord messages (mentions converted, split at the limit). */
  render(text: string): string[];
  /** Posts the reply whole (when the stream ends without a message of its own). */
  postWhole(text: string): Promise<Posted>;
}

export class DiscordStreams {
  /** `channel:bot user id` → replies that bot is streaming there. */
  private readonly open = new Map<string, Set<EditStream>>();

  constructor(
    private readonly deps: {
      readonly poster: ReplyPoster;
      readonly intervalMs: number;
      readonly clock: StreamClock;
      readonly log: Logger;
    },
  ) {}

  start(place: StreamPlace): StreamingPost {
    const { client, channel, render } = place;
    const post = new EditStream({
      preview: (text) => render(text)[0] ?? '',
      final: render,
      notifies: (message) => USER_MENTION.test(message),
      intervalMs: this.deps.intervalMs,
      clock: this.deps.clock,
      logger: this.deps.log,
      transport: {
        create: (content) => discordTarget(client, channel, NO_MENTIONS).send(content, undefined, undefined, true),
        edit: async (id, content) => {
          await client.rest.patch(Routes.channelMessage(channel, id), {
            body: { content, allowed_mentions: NO_MENTIONS },
          });
        },
        remove: async (id) => {
          await client.rest.delete(Routes.channelMessage(channel, id));
        },
        append: async (chunks) =>
          (await this.deps.poster.post(discordTarget(client, channel, ALLOWED_MENTIONS), chunks)).ids,
        postWhole: place.postWhole,
      },
    });
    const key = `${channel}:${place.bot}`;
    const open = this.open.get(key) ?? new Set();
    this.open.set(key, open.add(post));
    void post.settled.then(() => {
      open.delete(post);
      if (open.size === 0 && this.open.get(key) === open) this.open.delete(key);
    });
    return post;
  }

  /**
   * A message from a bot that is streaming a reply in this room may be that reply's partial: it waits until the
   * reply is finished or removed. False: it was a removed partial, not to be forwarded.
   */
  async settled(channel: string, author: string, id: string): Promise<boolean> {
    const open = this.open.get(`${channel}:${author}`);
    if (!open || open.size === 0) return true;
    const streams = [...open];
    await Promise.all(streams.map((stream) => stream.settled));
    return !streams.some((stream) => stream.dropped.has(id));
  }

  /** Stops every stream (the adapter stops). */
  abandonAll(): void {
    for (const open of this.open.values()) for (const stream of open) stream.abandon();
  }
}
