/**
 * Posting on Discord: chunks in order, each with a nonce derived from the outbox entry (`enforce_nonce`: a post
 * sent again returns the message Discord already made), a cap on a reply's posts with the whole reply attached
 * as a file (multipart), and — for a post a restart may have sent already — a look at the room's recent messages.
 */
import { randomBytes } from 'node:crypto';
import { type APIMessage, type Client, Routes } from 'discord.js';
import type { Logger } from '../../src/log.js';
import type { PostOptions } from '../../src/ports.js';
import { capPosts, REPLY_FILE_NAME } from '../shared/post-cap.js';
import { compareIds, snowflakeAt } from './catch-up.js';

/** Discord's default upload limit for a bot's attachment (10 MiB). */
const FILE_LIMIT_BYTES = 10 * 1024 * 1024;
/** How far before its first try a resent post is looked for (clocks differ a little). */
const LOOK_BACK_MS = 60_000;
/** Pages of 100 recent messages read when looking for a resent post. */
const LOOK_PAGES = 3;

export interface SendResult {
  readonly ids: string[];
  /** The first failure, when a chunk could not be posted (the ids before it were). */
  readonly error?: unknown;
}

export class DiscordPosting {
  constructor(
    private readonly deps: {
      readonly log: Logger;
      /** MAX_REPLY_POSTS. */
      readonly maxPosts: number;
    },
  ) {}

  /**
   * A reply: its chunks, at most MAX_REPLY_POSTS posts — the rest as `reply.md` attached to the last one, or
   * cut with a note when the file cannot be attached. `whole` is the reply's text for the file.
   */
  async reply(
    client: Client,
    channel: string,
    chunks: readonly string[],
    whole: string,
    mentions: object,
    options: PostOptions = {},
  ): Promise<SendResult> {
    const capped = capPosts(chunks, this.deps.maxPosts, whole);
    const already =
      options.resendSince === undefined ? [] : await this.findPosted(client, channel, options.resendSince);
    const sent = await this.send(client, channel, capped.chunks, mentions, options, already);
    const overflow = capped.overflow;
    if (!overflow || sent.error !== undefined) return sent;
    const index = capped.chunks.length;
    const found = take(already, overflow.note) ?? take(already, overflow.cutNote);
    if (found) return { ids: [...sent.ids, found] };
    if (Buffer.byteLength(overflow.file) <= FILE_LIMIT_BYTES) {
      try {
        const posted = (await client.rest.post(Routes.channelMessages(channel), {
          body: this.body(overflow.note, mentions, options.key, index),
          files: [{ name: REPLY_FILE_NAME, data: Buffer.from(overflow.file, 'utf8'), contentType: 'text/markdown' }],
          ...(options.signal ? { signal: options.signal } : {}),
        })) as APIMessage;
        return { ids: [...sent.ids, posted.id] };
      } catch (error) {
        this.deps.log.warn({ err: error, channel }, 'the rest of a long reply could not be attached; it is cut');
      }
    }
    const cutOptions: PostOptions = {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.key ? { key: `${options.key}c` } : {}),
    };
    const cut = await this.send(client, channel, [overflow.cutNote], mentions, cutOptions);
    return { ids: [...sent.ids, ...cut.ids], ...(cut.error !== undefined ? { error: cut.error } : {}) };
  }

  /**
   * Posts chunks in order, each with its nonce, skipping those already posted; stops at the first failure: the
   * ids posted so far and the error. With `strict`, the error throws.
   */
  async send(
    client: Client,
    channel: string,
    chunks: readonly string[],
    mentions: object,
    options: PostOptions = {},
    already: Array<{ id: string; content: string }> = [],
    strict = false,
  ): Promise<SendResult> {
    const ids: string[] = [];
    try {
      for (const [index, content] of chunks.entries()) {
        const found = take(already, content);
        if (found) {
          ids.push(found);
          continue;
        }
        const posted = (await client.rest.post(Routes.channelMessages(channel), {
          body: this.body(content, mentions, options.key, index),
          ...(options.signal ? { signal: options.signal } : {}),
        })) as APIMessage;
        ids.push(posted.id);
      }
    } catch (error) {
      if (strict) throw error;
      if (ids.length > 0) this.deps.log.warn({ err: error, channel, posted: ids.length }, 'reply cut short');
      return { ids, error };
    }
    return { ids };
  }

  /** A message body; the nonce is the outbox key and the chunk's place (a fresh one without a key). */
  private body(content: string, mentions: object, key: string | undefined, index: number) {
    return {
      content,
      nonce: key ? `${key}.${index}` : randomBytes(9).toString('hex'),
      enforce_nonce: true,
      allowed_mentions: mentions,
    };
  }

  /**
   * This bot's messages in the room since a moment (a post a restart may have sent), oldest first. Discord
   * deduplicates a nonce only for a few minutes: a resend after a longer outage is found here instead.
   */
  private async findPosted(client: Client, channel: string, since: number) {
    const self = client.user?.id;
    const found: Array<{ id: string; content: string }> = [];
    let after = snowflakeAt(since - LOOK_BACK_MS);
    try {
      for (let page = 0; page < LOOK_PAGES; page += 1) {
        const query = new URLSearchParams({ after, limit: '100' });
        const batch = (await client.rest.get(Routes.channelMessages(channel), { query })) as APIMessage[];
        batch.sort((a, b) => compareIds(a.id, b.id));
        for (const message of batch) if (message.author.id === self) found.push(message);
        const newest = batch.at(-1);
        if (batch.length < 100 || !newest) break;
        after = newest.id;
      }
    } catch (error) {
      this.deps.log.warn(
        { err: error, channel },
        'could not look for a post sent before the restart; the nonce decides',
      );
    }
    return found.map((m) => ({ id: m.id, content: m.content }));
  }
}

/** Takes the first message with this content out of `list`. */
function take(list: Array<{ id: string; content: string }>, content: string): string | undefined {
  // Discord trims what it stores; so does the comparison.
  const at = list.findIndex((m) => m.content.trim() === content.trim());
  if (at < 0) return undefined;
  return list.splice(at, 1)[0]?.id;
}
