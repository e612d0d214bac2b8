/**
 * SLACK_STREAM=update: a reply shown while it is written, posted once and then edited with chat.update (at most
 * once a second, Slack's guidance) through the agent's own app. Its previews are noted (StreamEchoes), so their own
 * `message` events are never taken for new messages.
 */
import { AdapterError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import type { Posted, StreamingPost } from '../../src/ports.js';
import { splitMessage } from '../shared/split.js';
import { EditStream, systemClock } from '../shared/streaming-post.js';
import type { SlackIdentity } from './identity.js';
import { SLACK } from './inbound.js';
import { SLACK_MESSAGE_LIMIT } from './posting.js';
import type { StreamEchoes } from './stream-echoes.js';
import { callRetryable, isRateLimited, withRateLimitRetry } from './web-call.js';

/** Slack's guidance for chat.update: about one edit per second per message. */
const STREAM_INTERVAL_MS = 1000;

/** Slack notifies people of a mention when a message is posted, never when it is edited. */
const LIVE_MENTION = /<@[UW][A-Z0-9]+(?:\|[^>]*)?>/;

/** Where a streamed reply goes, how its text reads, and how the rest of it is posted. */
export interface SlackStreamPlace {
  readonly identity: SlackIdentity;
  readonly channel: string;
  readonly threadTs: string | undefined;
  /** The agent's Markdown as Slack mrkdwn; `liveMentions` false leaves `@name` as plain text. */
  render(text: string, liveMentions?: boolean): string;
  /** Posts the chunks after the first (in the thread, if any); returns their ts. */
  append(chunks: readonly string[]): Promise<string[]>;
  /** Posts the reply whole (when the stream ends without a message of its own). */
  postWhole(text: string): Promise<Posted>;
  readonly echoes: StreamEchoes;
  readonly log: Logger;
}

export function startSlackStream(place: SlackStreamPlace): StreamingPost {
  const { identity, channel, threadTs, render, echoes } = place;
  const client = identity.client;
  const where = { channel, ...(threadTs ? { thread_ts: threadTs } : {}) };
  const failed = (what: string, error: unknown) =>
    new AdapterError(SLACK, `@${identity.agent} could not ${what}: ${describeError(error)}`, {
      cause: error,
      retryable: callRetryable(error),
    });
  return new EditStream({
    intervalMs: STREAM_INTERVAL_MS,
    clock: systemClock,
    logger: place.log,
    // Mentions in a preview stay plain text: a posted preview would notify, and the final reply may too.
    preview: (text) => splitMessage(render(text, false), SLACK_MESSAGE_LIMIT)[0] ?? '',
    final: (text) => splitMessage(render(text), SLACK_MESSAGE_LIMIT),
    notifies: (message) => LIVE_MENTION.test(message),
    transport: {
      create: (text) =>
        echoes.track(
          channel,
          client.chat.postMessage({ ...where, text, unfurl_links: false }).then(
            (result) => result.ts,
            (error: unknown) => {
              if (isRateLimited(error)) return undefined; // nothing posted; a later preview tries again
              throw failed('post', error);
            },
          ),
        ),
      edit: async (ts, text, final) => {
        const call = () => client.chat.update({ channel, ts, text });
        try {
          // chat.update is safe to repeat; only the final edit is worth waiting out a 429 for.
          await (final ? withRateLimitRetry(call) : call());
        } catch (error) {
          throw failed('edit its reply', error);
        }
      },
      remove: async (ts) => {
        try {
          await withRateLimitRetry(() => client.chat.delete({ channel, ts }));
        } catch (error) {
          throw failed('delete its unfinished reply', error);
        }
      },
      append: place.append,
      postWhole: place.postWhole,
    },
  });
}
