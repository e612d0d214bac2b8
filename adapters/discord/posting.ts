/**
 * Discord's side of posting (the procedure is adapters/shared/reply-posting.ts): each message with a nonce, the
 * post's key (`enforce_nonce`: a post sent again returns the message Discord already made), the whole of a long
 * reply attached as a file (multipart), and the bot's recent messages in the room — Discord keeps a nonce for a few
 * minutes only, so a resend after a longer outage is found there instead.
 */
import { randomBytes } from 'node:crypto';
import { type APIMessage, type Client, DiscordAPIError, HTTPError, Routes } from 'discord.js';
import type { RecentPost, ReplyTarget } from '../shared/reply-posting.js';
import { compareIds, snowflakeAt } from './catch-up.js';
import { DISCORD_MESSAGE_LIMIT } from './inbound.js';

/** Discord's default upload limit for a bot's attachment (10 MiB). */
const FILE_LIMIT_BYTES = 10 * 1024 * 1024;
/** How far before its first try a resent post is looked for (clocks differ a little). */
const LOOK_BACK_MS = 60_000;
/** Pages of 100 recent messages read when looking for a resent post. */
const LOOK_PAGES = 3;

/**
 * Posting through one bot in one channel; `mentions` is the `allowed_mentions` of every message, `components` (a
 * card's buttons) go under the last part.
 */
export function discordTarget(client: Client, channel: string, mentions: object, components?: object[]): ReplyTarget {
  const body = (content: string, key: string | undefined, last = false) => ({
    content,
    nonce: key ?? randomBytes(9).toString('hex'),
    enforce_nonce: true,
    allowed_mentions: mentions,
    ...(last && components ? { components } : {}),
  });
  return {
    room: channel,
    limit: DISCORD_MESSAGE_LIMIT,
    fileLimitBytes: FILE_LIMIT_BYTES,
    send: async (text, key, signal, last) => {
      const posted = (await client.rest.post(Routes.channelMessages(channel), {
        body: body(text, key, last),
        ...(signal ? { signal } : {}),
      })) as APIMessage;
      return posted.id;
    },
    attach: async (note, file, key, signal) => {
      const posted = (await client.rest.post(Routes.channelMessages(channel), {
        body: body(note, key),
        files: [{ name: file.name, data: Buffer.from(file.text, 'utf8'), contentType: 'text/markdown' }],
        ...(signal ? { signal } : {}),
      })) as APIMessage;
      return posted.id;
    },
    recent: (since) => ownMessagesSince(client, channel, since),
  };
}

/** This bot's messages in the channel since a moment, oldest first. */
async function ownMessagesSince(client: Client, channel: string, since: number): Promise<RecentPost[]> {
  const self = client.user?.id;
  const found: RecentPost[] = [];
  let after = snowflakeAt(since - LOOK_BACK_MS);
  for (let page = 0; page < LOOK_PAGES; page += 1) {
    const query = new URLSearchParams({ after, limit: '100' });
    const batch = (await client.rest.get(Routes.channelMessages(channel), { query })) as APIMessage[];
    batch.sort((a, b) => compareIds(a.id, b.id));
    for (const message of batch) if (message.author.id === self) found.push({ id: message.id, text: message.content });
    const newest = batch.at(-1);
    if (batch.length < 100 || !newest) break;
    after = newest.id;
  }
  return found;
}

/**
 * Whether a failed post is worth another try: Discord answered 5xx (discord.js has retried it already), 408 or 429,
 * or the request never got an answer (a dropped connection, a timeout). A 4xx refusal — 403 missing access or
 * permissions, 404 unknown channel, 400 an invalid message, 401 a revoked token — would be refused again.
 */
export function postRetryable(error: unknown): boolean {
  if (error instanceof DiscordAPIError || error instanceof HTTPError) {
    return error.status >= 500 || error.status === 429 || error.status === 408;
  }
  return true;
}
