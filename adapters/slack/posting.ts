/**
 * Slack's side of posting (the procedure is adapters/shared/reply-posting.ts): a message retried only on 429, which
 * Slack did not perform; the whole of a long reply uploaded as a file (files.uploadV2: the app needs the
 * files:write scope); and the app's recent messages in the conversation or thread — Slack has no idempotency key,
 * so a post a restart may have sent already is found there.
 */
import { AdapterError, describeError } from '../../src/errors.js';
import type { PostButton } from '../../src/ports.js';
import type { ReplyTarget } from '../shared/reply-posting.js';
import { cardBlocks } from './buttons.js';
import type { SlackIdentity } from './identity.js';
import { SLACK } from './inbound.js';
import { withRateLimitRetry } from './web-call.js';

/** Slack truncates the display of longer texts; its guidance is to keep a message under 4000 characters. */
export const SLACK_MESSAGE_LIMIT = 4000;

/** How far before its first try a resent post is looked for (clocks differ a little). */
const LOOK_BACK_S = 60;

/** Posting through one app in a conversation (in the thread, if any); a card's `buttons` go under its last part. */
export function slackTarget(
  identity: SlackIdentity,
  channel: string,
  threadTs: string | undefined,
  buttons?: readonly PostButton[],
): ReplyTarget {
  const client = identity.client;
  return {
    room: channel,
    limit: SLACK_MESSAGE_LIMIT,
    send: async (text, _key, signal, last) => {
      const result = await withRateLimitRetry(
        () =>
          client.chat.postMessage({
            channel,
            text,
            ...(last && buttons?.length ? { blocks: cardBlocks(text, buttons) } : {}),
            ...(threadTs ? { thread_ts: threadTs } : {}),
            unfurl_links: false,
          }),
        { signal },
      );
      return result.ts;
    },
    // The upload's own message is recognised by its file, not its ts (Slack does not say which it is).
    attach: async (note, file) => {
      const upload = {
        initial_comment: note,
        file: Buffer.from(file.text, 'utf8'),
        filename: file.name,
        title: file.name,
      };
      try {
        await (threadTs
          ? client.filesUploadV2({ ...upload, channel_id: channel, thread_ts: threadTs })
          : client.filesUploadV2({ ...upload, channel_id: channel }));
      } catch (error) {
        throw new AdapterError(
          SLACK,
          `@${identity.agent} could not upload ${file.name} (the app needs the files:write scope): ${describeError(error)}`,
          { cause: error },
        );
      }
      return undefined;
    },
    recent: async (since) => {
      const oldest = String(Math.floor(since / 1000) - LOOK_BACK_S);
      const page = threadTs
        ? await withRateLimitRetry(() => client.conversations.replies({ channel, ts: threadTs, oldest, limit: 200 }))
        : await withRateLimitRetry(() => client.conversations.history({ channel, oldest, limit: 200 }));
      return (page.messages ?? [])
        .filter((m) => m.bot_id === identity.botId && m.ts && m.ts !== threadTs)
        .map((m) => ({ id: m.ts ?? '', text: m.text ?? '' }))
        .sort((a, b) => Number(a.id) - Number(b.id));
    },
  };
}

/** Who posts a line: the agent's own app, or another app's identity with the agent's name in front. */
export interface Sender {
  readonly identity: SlackIdentity;
  /** `*name:* ` for an agent speaking through another app's identity. */
  readonly label: string;
  /** The agent's Markdown as Slack mrkdwn; `liveMentions` false leaves `@name` as plain text. */
  render(text: string, liveMentions?: boolean): string;
}

/** An answered approval card: its words say how it ended, and its buttons go (`blocks: []` removes them). */
export async function closeCardMessage(sender: Sender, channel: string, ts: string, text: string): Promise<void> {
  const client = sender.identity.client;
  await withRateLimitRetry(() => client.chat.update({ channel, ts, text: sender.render(text), blocks: [] }));
}
