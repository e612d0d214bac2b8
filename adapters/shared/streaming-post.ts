/**
 * A reply shown while the agent writes it, by editing one message (Discord DISCORD_STREAM=edit, Slack
 * SLACK_STREAM=update). The first update posts the message, later ones edit it at most once per interval, and only
 * the newest text is ever sent (updates in between are skipped, with a trailing edit when the interval ends);
 * calls never overlap. Platforms notify a mention when a message is posted, never when it is edited, so the
 * partial pings no one and a final text that mentions someone replaces it with a fresh post.
 */
import type { Logger } from '../../src/log.js';
import type { Posted, StreamingPost } from '../../src/ports.js';

/** The platform calls one streamed reply makes, bound to its identity, room and thread. */
export interface EditTransport {
  /**
   * Posts the first partial text, pinging no one: its id, or undefined when the platform said "later" and
   * posted nothing (the next update tries again). Rejects when posting failed.
   */
  create(text: string): Promise<string | undefined>;
  /** Replaces the streamed message's text, pinging no one; `final` marks the last edit (worth waiting out a 429). */
  edit(id: string, text: string, final: boolean): Promise<void>;
  remove(id: string): Promise<void>;
  /** Posts the later chunks of a long final reply as new messages; their ids, in order. */
  append(chunks: readonly string[]): Promise<string[]>;
  /** Posts the reply the ordinary way, as fresh messages (they notify whom they mention). */
  postWhole(text: string): Promise<Posted>;
}

/** The clock and timer the throttle uses (tests drive them by hand). */
export interface StreamClock {
  now(): number;
  /** Runs `run` after `ms`; the returned function cancels it. */
  after(ms: number, run: () => void): () => void;
}

export const systemClock: StreamClock = {
  now: () => performance.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
};

export interface EditStreamOptions {
  readonly transport: EditTransport;
  /** The agent's partial text as shown while it is written: one message at most. */
  preview(text: string): string;
  /** The agent's final text as the platform's messages (live mentions, split at the platform's limit). */
  final(text: string): string[];
  /** Whether a rendered message notifies someone when it is posted (a platform user mention in it). */
  notifies(message: string): boolean;
  /** Least time between two calls that change the message (about one edit a second on both platforms). */
  readonly intervalMs: number;
  readonly clock: StreamClock;
  readonly logger: Logger;
}

export class EditStream implements StreamingPost {
  /** Resolves once finish() or cancel() is done: an adapter may hold the bot's echoes in the room until then. */
  readonly settled: Promise<void>;
  /** Messages this reply took back (deleted, or meant to be): their echoes must not reach the bridge. */
  readonly dropped = new Set<string>();
  private messageId: string | undefined;
  /** The newest text not yet sent, and what the message shows. */
  private latest: string | undefined;
  private shown: string | undefined;
  private busy: Promise<void> | undefined;
  private lastCallAt: number | undefined;
  private cancelTimer: (() => void) | undefined;
  private closed = false;
  /** The first post failed in a way that may repeat: no more partials; finish() posts the reply whole. */
  private broken = false;
  private resolveSettled: () => void = () => {};

  constructor(private readonly options: EditStreamOptions) {
    this.settled = new Promise((resolve) => {
      this.resolveSettled = resolve;
    });
  }

  update(text: string): void {
    if (this.closed || this.broken) return;
    this.latest = text;
    this.pump();
  }

  async finish(text: string): Promise<Posted> {
    this.close();
    try {
      await this.idle();
      return await this.complete(text);
    } finally {
      this.resolveSettled();
    }
  }

  async cancel(): Promise<void> {
    this.close();
    try {
      await this.idle();
      await this.removeShown();
    } finally {
      this.resolveSettled();
    }
  }

  /** Gives up without another call (the adapter is stopping). */
  abandon(): void {
    this.close();
    this.resolveSettled();
  }

  /** Sends the newest text now, or when the interval since the last call has passed. */
  private pump(): void {
    if (this.busy || this.cancelTimer || this.closed || this.broken || this.latest === undefined) return;
    const { clock, intervalMs } = this.options;
    const wait = this.lastCallAt === undefined ? 0 : this.lastCallAt + intervalMs - clock.now();
    if (wait > 0) {
      this.cancelTimer = clock.after(wait, () => {
        this.cancelTimer = undefined;
        this.pump();
      });
      return;
    }
    const text = this.options.preview(this.latest);
    this.latest = undefined;
    if (!text.trim() || text === this.shown) return;
    this.lastCallAt = clock.now();
    this.busy = this.send(text).finally(() => {
      this.busy = undefined;
      this.pump();
    });
  }

  private async send(text: string): Promise<void> {
    const { transport, logger } = this.options;
    try {
      if (this.messageId === undefined) this.messageId = await transport.create(text);
      else await transport.edit(this.messageId, text, false);
      if (this.messageId !== undefined) this.shown = text;
    } catch (error) {
      // A failed edit is overtaken by the next one; a failed first post leaves nothing to edit.
      if (this.messageId === undefined) this.broken = true;
      logger.warn({ err: error }, 'a streamed reply could not be shown');
    }
  }

  private async complete(text: string): Promise<Posted> {
    const { transport, logger } = this.options;
    const id = this.messageId;
    if (id === undefined) return transport.postWhole(text); // nothing shown: a plain post
    const [first, ...more] = this.options.final(text);
    if (first === undefined) {
      await this.removeShown();
      return { messageIds: [] };
    }
    // An edit would show the mention without telling anyone: post the reply afresh, the partial goes.
    // Later chunks are new posts anyway, so they notify as they are.
    if (this.options.notifies(first)) {
      await this.removeShown();
      return transport.postWhole(text);
    }
    if (first !== this.shown) {
      try {
        await transport.edit(id, first, true);
      } catch (error) {
        logger.warn({ err: error }, 'could not finish a streamed reply; posting it whole');
        await this.removeShown();
        return transport.postWhole(text);
      }
    }
    return { messageIds: [id, ...(more.length > 0 ? await transport.append(more) : [])] };
  }

  /**
   * Deletes the streamed message, if there is one. Should that fail, the partial stays visible but is still no
   * part of the reply: the router never counts it.
   */
  private async removeShown(): Promise<void> {
    const id = this.messageId;
    if (id === undefined) return;
    this.dropped.add(id);
    this.messageId = undefined;
    this.shown = undefined;
    try {
      await this.options.transport.remove(id);
    } catch (error) {
      this.options.logger.warn({ err: error, id }, 'could not delete a streamed reply');
    }
  }

  private close(): void {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private async idle(): Promise<void> {
    while (this.busy) await this.busy;
  }
}
