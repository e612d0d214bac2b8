/** A line one person sees alone (chat.postEphemeral): why their message woke nobody, from the bridge. */
import type { Logger } from '../../src/log.js';
import type { SlackIdentity } from './identity.js';

/** Posts `text` to `user` alone in the conversation (a thread's when given); false when Slack refused it. */
export async function postEphemeral(
  identity: SlackIdentity,
  where: { readonly channel: string; readonly threadTs?: string | undefined },
  user: string,
  text: string,
  log: Logger,
): Promise<boolean> {
  try {
    await identity.client.chat.postEphemeral({
      channel: where.channel,
      user,
      text,
      ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
    });
    return true;
  } catch (error) {
    log.warn({ err: error, channel: where.channel }, 'an ephemeral line could not be posted');
    return false;
  }
}
