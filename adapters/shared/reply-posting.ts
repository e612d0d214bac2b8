/**
 * How a reply leaves, on every platform: split at the platform's length limit, posted in order, at most
 * MAX_REPLY_POSTS posts (the rest attached as `reply.md` to the last one, or cut with a note when no file can be
 * attached), each post with a key derived from the outbox entry and its place in the reply, and — for a post a
 * restart may have sent already — a look at the identity's recent messages in the room first, so nothing already
 * there is posted again. A platform supplies only what is its own: a `ReplyTarget`.
 */
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { PostOptions } from '../../src/ports.js';
import { capPosts, REPLY_FILE_NAME } from './post-cap.js';
import { splitMessage } from './split.js';

/** A message the identity posted in the room, as the platform lists it. */
export interface RecentPost {
  readonly id: string;
  readonly text: string;
}

/** A file attached to a post. */
export interface PostFile {
  readonly name: string;
  readonly text: string;
}

/** What posting needs from one platform, for one identity in one room. */
export interface ReplyTarget {
  /** The room, for the log. */
  readonly room: string;
  /** The platform's length limit for one message. */
  readonly limit: number;
  /** The largest attachment the platform takes, in bytes; undefined when the platform itself says no. */
  readonly fileLimitBytes?: number | undefined;
  /**
   * Posts one message and returns its id (undefined: the platform did not say). `key` names this post across
   * resends of the same outbox entry (undefined: the post has no key), for platforms that deduplicate by it.
   * `last`: the post's last part (a card's buttons go under it).
   */
  send(
    text: string,
    key: string | undefined,
    signal: AbortSignal | undefined,
    last: boolean,
  ): Promise<string | undefined>;
  /** Posts `note` with `file` attached; returns the message's id when the platform says which one it is. */
  attach(
    note: string,
    file: PostFile,
    key: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string | undefined>;
  /** The identity's messages in the room since a moment (milliseconds since the epoch), oldest first. */
  recent(since: number): Promise<RecentPost[]>;
}

/** The ids of the messages posted, in order; `error` when a post failed (those before it were made). */
export interface PostResult {
  readonly ids: string[];
  readonly error?: unknown;
}

/** The key of a reply's post at `index`: the outbox key and the post's place (none without an outbox key). */
export function postKey(key: string | undefined, index: number): string | undefined {
  return key === undefined ? undefined : `${key}.${index}`;
}

/** The outbox key of the note a cut reply ends with (posted on its own, after the chunks). */
function cutKey(key: string | undefined): string | undefined {
  return key === undefined ? undefined : `${key}c`;
}

export class ReplyPoster {
  constructor(
    private readonly deps: {
      readonly log: Logger;
      /** MAX_REPLY_POSTS. */
      readonly maxPosts: number;
    },
  ) {}

  /**
   * A reply: `text` (as the platform shows it) split into posts, at most MAX_REPLY_POSTS of them — the rest as
   * `reply.md` attached to the last one, or cut with a note when the file cannot be attached. `whole` is the
   * reply's text for the file.
   */
  async reply(target: ReplyTarget, text: string, whole: string, options: PostOptions = {}): Promise<PostResult> {
    const capped = capPosts(splitMessage(text, target.limit), this.deps.maxPosts, whole);
    const already = options.resendSince === undefined ? [] : await this.recent(target, options.resendSince);
    const sent = await this.post(target, capped.chunks, options, already);
    const overflow = capped.overflow;
    if (!overflow || sent.error !== undefined) return sent;
    const found = take(already, overflow.note) ?? take(already, overflow.cutNote);
    if (found) return { ids: [...sent.ids, found] };
    const limit = target.fileLimitBytes;
    if (limit === undefined || Buffer.byteLength(overflow.file) <= limit) {
      try {
        const file = { name: REPLY_FILE_NAME, text: overflow.file };
        const id = await target.attach(overflow.note, file, postKey(options.key, capped.chunks.length), options.signal);
        return { ids: id === undefined ? sent.ids : [...sent.ids, id] };
      } catch (error) {
        this.deps.log.warn(
          { err: error, channel: target.room },
          `the rest of a long reply could not be attached; it is cut (${describeError(error)})`,
        );
      }
    }
    const key = cutKey(options.key);
    const cut = await this.post(target, [overflow.cutNote], {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(key ? { key } : {}),
    });
    return { ids: [...sent.ids, ...cut.ids], ...(cut.error !== undefined ? { error: cut.error } : {}) };
  }

  /**
   * Posts chunks in order, each with its key, skipping those found `already` posted; stops at the first failure:
   * the ids posted so far and the error.
   */
  async post(
    target: ReplyTarget,
    chunks: readonly string[],
    options: Pick<PostOptions, 'key' | 'signal'> = {},
    already: RecentPost[] = [],
  ): Promise<PostResult> {
    const ids: string[] = [];
    try {
      for (const [index, chunk] of chunks.entries()) {
        const found = take(already, chunk);
        if (found) {
          ids.push(found);
          continue;
        }
        options.signal?.throwIfAborted();
        const id = await target.send(chunk, postKey(options.key, index), options.signal, index === chunks.length - 1);
        if (id !== undefined) ids.push(id);
      }
    } catch (error) {
      if (ids.length > 0)
        this.deps.log.warn({ err: error, channel: target.room, posted: ids.length }, 'reply cut short');
      return { ids, error };
    }
    return { ids };
  }

  /** The identity's recent messages, or none when they cannot be read (the post then goes out again). */
  private async recent(target: ReplyTarget, since: number): Promise<RecentPost[]> {
    try {
      return await target.recent(since);
    } catch (error) {
      this.deps.log.warn({ err: error, channel: target.room }, 'could not look for a post sent before the restart');
      return [];
    }
  }
}

/** Takes the first message with this text out of `list` (platforms trim what they store; so does the comparison). */
function take(list: RecentPost[], text: string): string | undefined {
  const at = list.findIndex((post) => post.text.trim() === text.trim());
  if (at < 0) return undefined;
  return list.splice(at, 1)[0]?.id;
}
