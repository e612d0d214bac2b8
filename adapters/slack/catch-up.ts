/**
 * After a restart or a long reconnect, reads what the rooms missed: new top-level messages of each conversation
 * (`conversations.history`, newest first) and new replies of the threads the bridge knows or just found
 * (`conversations.replies`). Slack limits both tightly for apps outside the Marketplace (a request a minute per
 * method, 15 messages a page), so the reading runs in the background: live messages go on meanwhile, each 429's
 * Retry-After is waited out, at most CATCHUP_MAX messages per room are kept (the newest), and a conversation whose
 * history could not be read is read again later (CatchUpRetries). What a read finds is forwarded as missed: each room
 * answers its backlog once, as its newest state, when that room is caught up.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../src/log.js';
import type { AdapterSink } from '../../src/ports.js';
import { CatchUpRetries } from '../shared/catch-up-retries.js';
import type { RoomMarks } from '../shared/room-marks.js';
import type { SlackIdentity } from './identity.js';
import type { SlackMessageEvent } from './inbound.js';
import { parseRoom, roomId } from './rooms.js';
import { isRateLimited } from './web-call.js';

/** Messages asked per page (Slack may give fewer: 15 for apps outside the Marketplace). */
const PAGE_SIZE = 200;

/** Slack timestamps (`seconds.micros`) in time order. */
export function compareTs(a: string, b: string): number {
  const [as = '0', au = '0'] = a.split('.');
  const [bs = '0', bu = '0'] = b.split('.');
  return Number(as) - Number(bs) || Number(au.padEnd(6, '0')) - Number(bu.padEnd(6, '0'));
}

const later = (a: string | undefined, b: string | undefined) =>
  a === undefined ? b : b === undefined ? a : compareTs(a, b) >= 0 ? a : b;

type HistoryItem = Omit<SlackMessageEvent, 'channel'> & {
  readonly reply_count?: number;
  readonly latest_reply?: string;
};

interface Page {
  readonly messages?: HistoryItem[];
  readonly has_more?: boolean;
  readonly response_metadata?: { readonly next_cursor?: string };
}

/** What one conversation's catch-up reads: top-level messages after `after`, and these threads (ts → room). */
interface Conversation {
  readonly after: string | undefined;
  readonly threads: Map<string, string>;
}
export class SlackCatchUp {
  /** Threads a read found whose replies are not read yet, by conversation (a failed read leaves them here). */
  private readonly unread = new Map<string, Map<string, string>>();
  private readonly retries: CatchUpRetries;
  private readonly stopping = new AbortController();
  /** Reads run one at a time (Slack's limits are per app and method): passes and retries queue here. */
  private reading: Promise<unknown> = Promise.resolve();
  private pass: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly deps: {
      readonly platform: string;
      readonly sink: () => AdapterSink | undefined;
      readonly identities: () => readonly SlackIdentity[];
      /** The app a DM belongs to (only it can read it). */
      readonly ownerOf: (channel: string) => SlackIdentity | undefined;
      readonly marks: RoomMarks;
      /** CATCHUP_MAX: messages fetched per room at most. */
      readonly max: number;
      /** Forwards a fetched message to the bridge (as missed); resolves with its room (undefined: not forwarded). */
      readonly forward: (identity: SlackIdentity, event: SlackMessageEvent) => Promise<string | undefined>;
      readonly log: Logger;
    },
  ) {
    this.retries = new CatchUpRetries({ log: deps.log, what: 'slack catch-up' });
  }

  /**
   * Reads, in the background, what every room the bridge knows missed (most recently active conversation first).
   * Asked while a pass runs, one more pass follows it.
   */
  request(): void {
    if (this.stopping.signal.aborted) return;
    if (this.pass) {
      this.again = true;
      return;
    }
    this.pass = this.passes()
      .catch((error: unknown) => this.deps.log.error({ err: error }, 'slack catch-up stopped unexpectedly'))
      .finally(() => {
        this.pass = undefined;
      });
  }

  /** Resolves when no pass is under way. */
  async idle(): Promise<void> {
    while (this.pass) await this.pass;
  }

  /** Stops reading: waits of Slack's rate limits end, nothing is tried again. */
  stop(): void {
    this.stopping.abort();
    this.retries.stop();
  }

  private async passes(): Promise<void> {
    do {
      this.again = false;
      const sink = this.deps.sink();
      if (!sink || this.deps.max <= 0) return;
      for (const [channel, conversation] of this.conversations(sink)) {
        if (this.stopping.signal.aborted) return;
        const read = await this.exclusive(() => this.conversation(channel, conversation));
        if (read) this.retries.succeeded(channel);
        else this.retries.failed(channel, () => this.retry(channel));
      }
    } while (this.again);
  }

  /** A conversation read again after a failure, from where its rooms are now. */
  private retry(channel: string): Promise<boolean> {
    const sink = this.deps.sink();
    const conversation = sink ? this.conversations(sink).get(channel) : undefined;
    if (!conversation) return Promise.resolve(true);
    return this.exclusive(() => this.conversation(channel, conversation));
  }

  private exclusive<T>(read: () => Promise<T>): Promise<T> {
    const next = this.reading.then(read, read);
    this.reading = next.catch(() => undefined);
    return next;
  }

  /** Every conversation to read: where its top-level messages start, and its threads (known, or found unread). */
  private conversations(sink: AdapterSink): Map<string, Conversation> {
    const conversations = new Map<string, { after: string | undefined; threads: Map<string, string> }>();
    const entry = (channel: string) => {
      const known = conversations.get(channel) ?? { after: undefined, threads: new Map<string, string>() };
      conversations.set(channel, known);
      return known;
    };
    for (const { channel: room, new: fresh } of sink.rooms?.(this.deps.platform) ?? []) {
      const { channel, threadTs } = parseRoom(room);
      const known = entry(channel);
      // A thread's parent is a top-level message the conversation had: history starts after the newest one — of
      // the threads known before this start (one begun live since may come after what a gap left unread).
      if (threadTs) {
        known.threads.set(threadTs, room);
        if (!fresh) known.after = later(known.after, threadTs);
      } else {
        known.after = later(known.after, this.deps.marks.start(room));
      }
    }
    for (const [channel, threads] of this.unread) {
      const known = entry(channel);
      for (const [ts, room] of threads) known.threads.set(ts, room);
    }
    return conversations;
  }

  /** Reads one conversation; false when its history could not be read (what was read is forwarded and marked). */
  private async conversation(channel: string, { after, threads }: Conversation): Promise<boolean> {
    const identity = this.reader(channel);
    if (!identity) return true;
    const signal = this.stopping.signal;
    try {
      if (after) {
        const parents = await this.topLevel(identity, channel, after, signal);
        for (const ts of parents) {
          if (threads.has(ts)) continue;
          const room = roomId(channel, ts);
          threads.set(ts, room);
          const unread = this.unread.get(channel) ?? new Map<string, string>();
          this.unread.set(channel, unread.set(ts, room));
        }
      }
      for (const [ts, room] of threads) {
        await this.thread(identity, channel, ts, room, signal);
        this.unread.get(channel)?.delete(ts);
      }
      if (this.unread.get(channel)?.size === 0) this.unread.delete(channel);
      return true;
    } catch (error) {
      if (signal.aborted) return true;
      this.deps.log.warn({ err: error, channel }, 'slack catch-up: the history of a conversation could not be read');
      return false;
    }
  }

  /** New top-level messages (newest kept), forwarded oldest first; returns the ts of those that have replies. */
  private async topLevel(identity: SlackIdentity, channel: string, after: string, signal: AbortSignal) {
    const found: HistoryItem[] = [];
    let cursor: string | undefined;
    let more = false;
    do {
      const page = (await this.call(
        () =>
          identity.client.conversations.history({
            channel,
            oldest: after,
            limit: PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
          }),
        signal,
      )) as Page;
      found.push(...(page.messages ?? []));
      cursor = page.response_metadata?.next_cursor || undefined;
      more = Boolean(page.has_more && cursor);
    } while (more && found.length < this.deps.max);
    const kept = found.filter((m) => compareTs(m.ts, after) > 0).slice(0, this.deps.max);
    if (more) this.truncated(channel, after, kept.at(-1)?.ts);
    kept.reverse();
    for (const item of kept) {
      const room = await this.deps.forward(identity, this.event(channel, item));
      // A message that begins a room of its own (a thread for the answers) and has no replies to read: that room is
      // caught up now (one with replies is, once they are read).
      if (room && room !== channel && (item.reply_count ?? 0) === 0) this.deps.marks.caughtUp(room, item.ts);
    }
    this.deps.marks.caughtUp(channel, later(after, kept.at(-1)?.ts));
    return kept.filter((m) => (m.reply_count ?? 0) > 0).map((m) => m.ts);
  }

  /** A thread's replies after the room's mark (the newest CATCHUP_MAX), forwarded oldest first. */
  private async thread(identity: SlackIdentity, channel: string, ts: string, room: string, signal: AbortSignal) {
    const after = this.deps.marks.start(room) ?? ts;
    const replies: HistoryItem[] = [];
    let cursor: string | undefined;
    do {
      const page = (await this.call(
        () =>
          identity.client.conversations.replies({
            channel,
            ts,
            oldest: after,
            limit: PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
          }),
        signal,
      )) as Page;
      replies.push(...(page.messages ?? []).filter((m) => m.ts !== ts && compareTs(m.ts, after) > 0));
      cursor = page.has_more ? page.response_metadata?.next_cursor || undefined : undefined;
    } while (cursor);
    const kept = replies.slice(-this.deps.max);
    if (replies.length > kept.length) this.truncated(room, after, kept[0]?.ts);
    for (const item of kept) await this.deps.forward(identity, this.event(channel, item));
    this.deps.marks.caughtUp(room, later(after, kept.at(-1)?.ts));
  }

  /** A call that waits out every 429's Retry-After (reading runs in the background); a stop ends the wait. */
  private async call<T>(request: () => Promise<T>, signal: AbortSignal): Promise<T> {
    for (;;) {
      try {
        return await request();
      } catch (error) {
        if (!isRateLimited(error)) throw error;
        this.deps.log.debug({ retryAfterS: error.retryAfter }, "slack catch-up: waiting out Slack's rate limit");
        await sleep(error.retryAfter * 1000, undefined, { signal });
      }
    }
  }

  /** The app that reads a conversation: a DM's own app, else the control app first. */
  private reader(channel: string): SlackIdentity | undefined {
    const identities = this.deps.identities();
    return this.deps.ownerOf(channel) ?? identities.find((i) => i.control) ?? identities[0];
  }

  private event(channel: string, item: HistoryItem): SlackMessageEvent {
    const channelType = channel.startsWith('D') ? 'im' : channel.startsWith('G') ? 'group' : 'channel';
    return { ...item, type: 'message', channel, channel_type: channelType };
  }

  private truncated(room: string, after: string, oldestKept: string | undefined): void {
    this.deps.log.warn(
      { channel: room, after, oldestFetched: oldestKept, max: this.deps.max },
      'more messages were missed than CATCHUP_MAX: the oldest of them were not fetched',
    );
  }
}
