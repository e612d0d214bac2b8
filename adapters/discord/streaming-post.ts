/**
 * A Discord reply shown while the agent writes it (DISCORD_STREAM=edit). The first update creates the message,
 * later ones edit it at most once per interval, and only the latest text is ever sent (updates in between are
 * coalesced, with a trailing edit when the interval ends). Discord pings on create, never on edit, so the
 * partial message pings no one; a final text that mentions someone replaces it with a fresh post, which pings.
 */
import type { Logger } from '../../src/log.js';
import type { Posted, StreamingPost } from '../../src/ports.js';
import { splitMessage } from './split.js';

/** The Discord requests a streamed reply makes, bound to one channel and one bot. */
export interface StreamTransport {
  /** Creates the message (with a nonce, pinging no one); resolves with its id. */
  create(content: string): Promise<string>;
  /** Replaces the message's content (pinging no one). */
  edit(id: string, content: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** Posts further chunks of the reply; resolves with the ids of those that were posted (never rejects). */
  append(chunks: readonly string[]): Promise<string[]>;
  /** Posts the reply whole, exactly as the adapter's post() does. */
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

export interface StreamingPostOptions {
  readonly transport: StreamTransport;
  /** The reply's text as Discord shows it (speaker prefix, `@name` → `<@id>`). */
  readonly render: (text: string) => string;
  /** Least time between two requests that change the message (issue 4: at most one edit a second). */
  readonly intervalMs: number;
  readonly clock: StreamClock;
  readonly logger: Logger;
}

/** A user or bot mention, which pings only when the message is created. */
const USER_MENTION = /<@!?\d+>/;

export class DiscordStreamingPost implements StreamingPost {
  /** Resolves once finish() or cancel() is done: the adapter holds this bot's echoes in the room until then. */
  readonly settled: Promise<void>;
  /** Messages this reply took back (deleted, or meant to be): their echoes must not reach the bridge. */
  readonly dropped = new Set<string>();
  private messageId: string | undefined;
  /** What should be on screen (the first chunk of the latest text), and what is. */
  private wanted: string | undefined;
  private shown: string | undefined;
  private busy: Promise<void> | undefined;
  private lastRequestAt = Number.NEGATIVE_INFINITY;
  private cancelTimer: (() => void) | undefined;
  private closed = false;
  /** The first create failed: nothing is shown, and finish() posts the reply whole. */
  private broken = false;
  private resolveSettled: () => void = () => {};

  constructor(private readonly options: StreamingPostOptions) {
    this.settled = new Promise((resolve) => {
      this.resolveSettled = resolve;
    });
  }

  update(text: string): void {
    if (this.closed || this.broken) return;
    const first = splitMessage(this.options.render(text))[0];
    if (first === undefined) return;
    this.wanted = first;
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
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not remove a streamed discord reply');
    } finally {
      this.resolveSettled();
    }
  }

  /** Gives up without touching Discord (the adapter is stopping). */
  abandon(): void {
    this.close();
    this.resolveSettled();
  }

  /** Sends the wanted text if nothing is under way and the interval allows; else waits for the next chance. */
  private pump(): void {
    if (this.busy || this.closed || this.broken || this.wanted === undefined || this.wanted === this.shown) return;
    if (this.messageId !== undefined) {
      const wait = this.lastRequestAt + this.options.intervalMs - this.options.clock.now();
      if (wait > 0) {
        this.cancelTimer ??= this.options.clock.after(wait, () => {
          this.cancelTimer = undefined;
          this.pump();
        });
        return;
      }
    }
    const content = this.wanted;
    this.lastRequestAt = this.options.clock.now();
    this.busy = this.send(content).finally(() => {
      this.busy = undefined;
      this.pump();
    });
  }

  private async send(content: string): Promise<void> {
    const { transport, logger } = this.options;
    try {
      if (this.messageId === undefined) this.messageId = await transport.create(content);
      else await transport.edit(this.messageId, content);
      this.shown = content;
    } catch (error) {
      // A failed edit is superseded by the next one; a failed create leaves nothing to edit.
      if (this.messageId === undefined) this.broken = true;
      logger.warn({ err: error }, 'streaming a discord reply failed');
    }
  }

  private async complete(text: string): Promise<Posted> {
    const { transport, render, logger } = this.options;
    const id = this.messageId;
    if (id === undefined) return transport.postWhole(text);
    const chunks = splitMessage(render(text));
    const [first, ...more] = chunks;
    // Edits never ping: a reply that mentions someone is posted afresh, and the partial goes.
    if (first === undefined || chunks.some((chunk) => USER_MENTION.test(chunk))) {
      await this.removeShown();
      return transport.postWhole(text);
    }
    if (first !== this.shown) {
      try {
        await transport.edit(id, first);
      } catch (error) {
        logger.warn({ err: error }, 'could not finish a streamed discord reply; posting it whole');
        await this.removeShown();
        return transport.postWhole(text);
      }
    }
    return { messageIds: [id, ...(more.length > 0 ? await transport.append(more) : [])] };
  }

  /**
   * Deletes the streamed message, if there is one. Should that fail, the partial stays visible but is still
   * no part of the reply: the router never counts it.
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
      this.options.logger.warn({ err: error, id }, 'could not delete a streamed discord reply');
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
