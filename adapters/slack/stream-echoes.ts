import { SeenIds } from '../shared/seen-ids.js';

/**
 * Remembers the messages posted as streamed previews, so their own `message` events are
 * not forwarded as new messages. The bridge learns a streamed message's ts only when the
 * reply is finished, and never when it is cancelled (deleted) or replaced by a fresh post;
 * and Slack may deliver the event before chat.postMessage has answered, so a check waits
 * for the previews still being posted in that conversation.
 */
export class StreamEchoes {
  private readonly posted = new SeenIds();
  private readonly pending = new Map<string, Set<Promise<unknown>>>();

  /** Notes a preview being posted in `channel`; resolves with its ts (undefined when nothing was posted). */
  track(channel: string, posting: Promise<string | undefined>): Promise<string | undefined> {
    const done = posting.then((ts) => {
      if (ts !== undefined) this.posted.add(`${channel}:${ts}`);
      return ts;
    });
    const set = this.pending.get(channel) ?? new Set();
    set.add(done);
    this.pending.set(channel, set);
    const forget = () => {
      set.delete(done);
      if (set.size === 0 && this.pending.get(channel) === set) this.pending.delete(channel);
    };
    done.then(forget, forget);
    return done;
  }

  /** Whether the message `ts` in `channel` is a streamed preview (after the previews under way are posted). */
  async isPreview(channel: string, ts: string): Promise<boolean> {
    const pending = this.pending.get(channel);
    if (pending) await Promise.allSettled([...pending]);
    return this.posted.has(`${channel}:${ts}`);
  }
}
