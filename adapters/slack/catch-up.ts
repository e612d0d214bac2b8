/**
 * After a restart or a reconnect, reads what the rooms missed: new top-level messages of each conversation
 * (`conversations.history`, newest first) and new replies of the threads the bridge knows or just found
 * (`conversations.replies`). Slack limits both tightly for apps outside the Marketplace (a request a minute, 15
 * messages a page): pages are read slowly, each 429's Retry-After waited out within a time budget, at most
 * CATCHUP_MAX messages per room (the newest), and what could not be read is logged.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../src/log.js';
import type { AdapterSink } from '../../src/ports.js';
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

/** The budget ran out while Slack asked us to wait. */
class OutOfTime extends Error {}

export class SlackCatchUp {
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
      /** How long one catch-up may spend waiting out rate limits. */
      readonly budgetMs: number;
      /** Forwards a fetched message to the bridge (as missed). */
      readonly forward: (identity: SlackIdentity, event: SlackMessageEvent) => Promise<void>;
      readonly log: Logger;
    },
  ) {}

  /** One pass over every room the bridge knows, most recently active conversation first. */
  async run(): Promise<void> {
    const sink = this.deps.sink();
    if (!sink || this.deps.max <= 0) return;
    const deadline = Date.now() + this.deps.budgetMs;
    const conversations = new Map<string, { after: string | undefined; threads: Map<string, string> }>();
    for (const { channel: room } of sink.rooms?.(this.deps.platform) ?? []) {
      const { channel, threadTs } = parseRoom(room);
      const entry = conversations.get(channel) ?? { after: undefined, threads: new Map<string, string>() };
      conversations.set(channel, entry);
      // A thread's parent is a top-level message the conversation had: history starts after the newest one.
      if (threadTs) {
        entry.threads.set(threadTs, room);
        entry.after = later(entry.after, threadTs);
      } else {
        entry.after = later(entry.after, this.deps.marks.start(room));
      }
    }
    for (const [channel, { after, threads }] of conversations) {
      const identity = this.reader(channel);
      if (!identity) continue;
      try {
        if (after) {
          const parents = await this.topLevel(identity, channel, after, deadline);
          for (const ts of parents) if (!threads.has(ts)) threads.set(ts, roomId(channel, ts));
        }
        for (const [ts, room] of threads) await this.thread(identity, channel, ts, room, deadline);
      } catch (error) {
        const why = error instanceof OutOfTime ? 'Slack rate limits left no time' : String(error);
        this.deps.log.warn({ channel, reason: why }, 'slack catch-up: what this conversation missed was not fetched');
      }
    }
  }

  /** New top-level messages (newest kept), forwarded oldest first; returns the ts of those that have replies. */
  private async topLevel(identity: SlackIdentity, channel: string, after: string, deadline: number) {
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
        deadline,
      )) as Page;
      found.push(...(page.messages ?? []));
      cursor = page.response_metadata?.next_cursor || undefined;
      more = Boolean(page.has_more && cursor);
    } while (more && found.length < this.deps.max);
    const kept = found.filter((m) => compareTs(m.ts, after) > 0).slice(0, this.deps.max);
    if (more) this.truncated(channel, after, kept.at(-1)?.ts);
    kept.reverse();
    for (const item of kept) await this.deps.forward(identity, this.event(channel, item));
    this.deps.marks.caughtUp(channel, later(after, kept.at(-1)?.ts));
    return kept.filter((m) => (m.reply_count ?? 0) > 0).map((m) => m.ts);
  }

  /** A thread's replies after the room's mark (the newest CATCHUP_MAX), forwarded oldest first. */
  private async thread(identity: SlackIdentity, channel: string, ts: string, room: string, deadline: number) {
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
        deadline,
      )) as Page;
      replies.push(...(page.messages ?? []).filter((m) => m.ts !== ts && compareTs(m.ts, after) > 0));
      cursor = page.has_more ? page.response_metadata?.next_cursor || undefined : undefined;
    } while (cursor);
    const kept = replies.slice(-this.deps.max);
    if (replies.length > kept.length) this.truncated(room, after, kept[0]?.ts);
    for (const item of kept) await this.deps.forward(identity, this.event(channel, item));
    this.deps.marks.caughtUp(room, later(after, kept.at(-1)?.ts));
  }

  /** A call that waits out 429s while the budget allows; throws OutOfTime when it does not. */
  private async call<T>(request: () => Promise<T>, deadline: number): Promise<T> {
    for (;;) {
      try {
        return await request();
      } catch (error) {
        if (!isRateLimited(error)) throw error;
        const wait = error.retryAfter * 1000;
        if (Date.now() + wait > deadline) throw new OutOfTime();
        await sleep(wait);
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
