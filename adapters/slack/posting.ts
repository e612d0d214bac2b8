/**
 * Posting on Slack: chunks in order (a chunk retried only on 429, which Slack did not perform), at most
 * MAX_REPLY_POSTS posts — the whole reply then uploaded as `reply.md` (files.uploadV2: the app needs the
 * files:write scope) or, without it, cut with a note. Slack has no idempotency key: a post a restart may have
 * sent already is looked for among the conversation's recent messages first.
 */
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { PostOptions } from '../../src/ports.js';
import { capPosts, REPLY_FILE_NAME } from '../shared/post-cap.js';
import type { SlackIdentity } from './identity.js';
import { withRateLimitRetry } from './web-call.js';

/** How far before its first try a resent post is looked for (clocks differ a little). */
const LOOK_BACK_S = 60;

interface Where {
  readonly channel: string;
  readonly threadTs: string | undefined;
}

export class SlackPosting {
  constructor(
    private readonly deps: {
      readonly log: Logger;
      /** MAX_REPLY_POSTS. */
      readonly maxPosts: number;
    },
  ) {}

  /** A reply's chunks, capped; `whole` is the reply's text for the file. Returns the ts of each post. */
  async reply(
    identity: SlackIdentity,
    where: Where,
    chunks: readonly string[],
    whole: string,
    options: PostOptions = {},
  ): Promise<string[]> {
    const capped = capPosts(chunks, this.deps.maxPosts, whole);
    const already =
      options.resendSince === undefined ? [] : await this.findPosted(identity, where, options.resendSince);
    const ids = await this.send(identity, where, capped.chunks, options.signal, already);
    const overflow = capped.overflow;
    if (!overflow) return ids;
    const found = take(already, overflow.note) ?? take(already, overflow.cutNote);
    if (found) return [...ids, found];
    try {
      // The upload's own message is recognised by its file, not its ts (Slack does not say which it is).
      const file = {
        initial_comment: overflow.note,
        file: Buffer.from(overflow.file, 'utf8'),
        filename: REPLY_FILE_NAME,
        title: REPLY_FILE_NAME,
      };
      await (where.threadTs
        ? identity.client.filesUploadV2({ ...file, channel_id: where.channel, thread_ts: where.threadTs })
        : identity.client.filesUploadV2({ ...file, channel_id: where.channel }));
      return ids;
    } catch (error) {
      this.deps.log.warn(
        { err: error, channel: where.channel, agent: identity.agent },
        `the rest of a long reply could not be uploaded (the app needs the files:write scope): it is cut (${describeError(error)})`,
      );
    }
    return [...ids, ...(await this.send(identity, where, [overflow.cutNote], options.signal, []))];
  }

  /** Posts chunks one by one (in the thread, if any), skipping those already posted; retries only on 429. */
  async send(
    identity: SlackIdentity,
    where: Where,
    chunks: readonly string[],
    signal?: AbortSignal,
    already: Array<{ ts: string; text: string }> = [],
  ): Promise<string[]> {
    const ids: string[] = [];
    for (const chunk of chunks) {
      const found = take(already, chunk);
      if (found) {
        ids.push(found);
        continue;
      }
      signal?.throwIfAborted();
      const result = await withRateLimitRetry(
        () =>
          identity.client.chat.postMessage({
            channel: where.channel,
            text: chunk,
            ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
            unfurl_links: false,
          }),
        { signal },
      );
      if (result.ts) ids.push(result.ts);
    }
    return ids;
  }

  /** This app's messages in the conversation (or thread) since a moment, oldest first. */
  private async findPosted(identity: SlackIdentity, where: Where, since: number) {
    const oldest = String(Math.floor(since / 1000) - LOOK_BACK_S);
    try {
      const page = where.threadTs
        ? await withRateLimitRetry(() =>
            identity.client.conversations.replies({
              channel: where.channel,
              ts: where.threadTs ?? '',
              oldest,
              limit: 200,
            }),
          )
        : await withRateLimitRetry(() =>
            identity.client.conversations.history({ channel: where.channel, oldest, limit: 200 }),
          );
      return (page.messages ?? [])
        .filter((m) => m.bot_id === identity.botId && m.ts && m.ts !== where.threadTs)
        .map((m) => ({ ts: m.ts ?? '', text: m.text ?? '' }))
        .sort((a, b) => Number(a.ts) - Number(b.ts));
    } catch (error) {
      this.deps.log.warn({ err: error, channel: where.channel }, 'could not look for a post sent before the restart');
      return [];
    }
  }
}

/** Takes the first message with this text out of `list`. */
function take(list: Array<{ ts: string; text: string }>, text: string): string | undefined {
  const at = list.findIndex((m) => m.text.trim() === text.trim());
  if (at < 0) return undefined;
  return list.splice(at, 1)[0]?.ts;
}
