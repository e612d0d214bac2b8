import type { Logger } from '../../src/log.js';
import type { Posted, StreamingPost } from '../../src/ports.js';

/** The Slack calls one streamed reply makes, already bound to its app, conversation and thread. */
export interface StreamCalls {
  /** chat.postMessage of the first preview: its ts, or undefined when Slack said "later" (429, nothing posted). */
  start(text: string): Promise<string | undefined>;
  /** chat.update of the streamed message; `final` waits out a 429, a preview does not. */
  update(ts: string, text: string, final: boolean): Promise<void>;
  /** chat.delete of the streamed message. */
  remove(ts: string): Promise<void>;
  /** Posts the later parts of a long final reply as new messages; their ts, in order. */
  postMore(chunks: readonly string[]): Promise<string[]>;
  /** Posts the final reply the ordinary way, as fresh messages (they notify whom they mention). */
  postFresh(text: string): Promise<Posted>;
}

export interface StreamingPostOptions {
  readonly calls: StreamCalls;
  /** A partial reply as shown while it is written: one message at most, mentions not live. */
  preview(text: string): string;
  /** The final reply as Slack messages (mrkdwn, live mentions, split at Slack's length). */
  final(text: string): string[];
  /** At most one Slack call per this many milliseconds while the reply is written. */
  readonly intervalMs: number;
  readonly log: Logger;
  readonly now?: () => number;
}

/** Slack notifies people of a mention when a message is posted, never when it is edited. */
const LIVE_MENTION = /<@[UW][A-Z0-9]+(?:\|[^>]*)?>/;

/**
 * One reply shown in Slack while the agent writes it: posted once, then edited with
 * chat.update at most once per interval, each edit showing the newest text (the ones in
 * between are skipped, and a last one goes out when the interval ends). Finishing edits it
 * to the final text; cancelling deletes it. Slack calls never overlap.
 */
export class SlackStreamingPost implements StreamingPost {
  private readonly options: StreamingPostOptions;
  private readonly now: () => number;
  /** The streamed message, once Slack has posted it. */
  private ts: string | undefined;
  /** The newest text not yet sent. */
  private latest: string | undefined;
  private shown: string | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastCallAt: number | undefined;
  private closed = false;
  /** The first post failed in a way that may repeat: no more previews; the reply is posted whole. */
  private broken = false;

  constructor(options: StreamingPostOptions) {
    this.options = options;
    this.now = options.now ?? (() => performance.now());
  }

  update(text: string): void {
    if (this.closed || this.broken) return;
    this.latest = text;
    this.pump();
  }

  async finish(text: string): Promise<Posted> {
    await this.close();
    const { calls } = this.options;
    const ts = this.ts;
    if (ts === undefined) return calls.postFresh(text); // nothing shown yet: a plain post
    const chunks = this.options.final(text);
    const [first, ...rest] = chunks;
    if (first === undefined) {
      await this.removeQuietly(ts);
      return { messageIds: [] };
    }
    if (LIVE_MENTION.test(first)) {
      // An edit would show the mention without telling anyone: post the reply fresh instead.
      await this.removeQuietly(ts);
      return calls.postFresh(text);
    }
    if (first !== this.shown) await calls.update(ts, first, true);
    const more = await calls.postMore(rest);
    return { messageIds: [ts, ...more] };
  }

  async cancel(): Promise<void> {
    await this.close();
    if (this.ts !== undefined) await this.removeQuietly(this.ts);
  }

  /** Stops previews and waits for the call under way, so the last word is the caller's. */
  private async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.inFlight) await this.inFlight;
  }

  private async removeQuietly(ts: string): Promise<void> {
    try {
      await this.options.calls.remove(ts);
    } catch (error) {
      this.options.log.warn({ err: error, ts }, 'could not delete a streamed slack message');
    }
  }

  /** Sends the newest text now, or when the interval since the last call has passed. */
  private pump(): void {
    if (this.closed || this.broken || this.inFlight || this.timer || this.latest === undefined) return;
    const wait = this.lastCallAt === undefined ? 0 : this.lastCallAt + this.options.intervalMs - this.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, wait);
      return;
    }
    const text = this.options.preview(this.latest);
    this.latest = undefined;
    if (!text.trim() || text === this.shown) return;
    this.lastCallAt = this.now();
    this.inFlight = this.send(text).finally(() => {
      this.inFlight = undefined;
      this.pump();
    });
  }

  private async send(text: string): Promise<void> {
    const { calls, log } = this.options;
    try {
      if (this.ts === undefined) this.ts = await calls.start(text);
      else await calls.update(this.ts, text, false);
      if (this.ts !== undefined) this.shown = text;
    } catch (error) {
      // A failed edit is overtaken by the next one; a failed first post stops the previews.
      if (this.ts === undefined) this.broken = true;
      log.warn({ err: error }, 'a streamed slack preview failed');
    }
  }
}
