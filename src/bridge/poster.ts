import type { Logger } from '../log.js';
import type { StreamingPost } from '../ports.js';
import type { ReplyTo, RoomMessage, ToolRun } from '../room/types.js';
import { redact } from '../secrets.js';
import type { JournalStore, OutboxEntry, OutboxPurpose } from '../store/index.js';
import type { Recorder } from './recorder.js';
import type { Room } from './rooms.js';

/** What follows a turn's reply once it is recorded (kept with the post, so a resend continues the same way). */
export type ReplyAfter = 'route' | 'world-pass' | 'round-limit';

export interface AgentPost {
  readonly toolRuns?: readonly ToolRun[] | undefined;
  /** What the turn answered: carried to the recorded message. */
  readonly replyTo?: ReplyTo | undefined;
  /** Who this message asks for a reply, when the caller decides (messaging actions: nobody). */
  readonly requests?: readonly string[] | undefined;
  /** The reply was shown while written: finish it instead of posting anew. */
  readonly stream?: StreamingPost | undefined;
  /** The turn whose reply this is (absent: a messaging action's post). */
  readonly turn?: { readonly id: number; readonly after: ReplyAfter } | undefined;
  /** Runs in the transaction that records the message: what the message means is stored with it, or nothing. */
  readonly recorded?: ((message: RoomMessage) => void) | undefined;
}

/** What the outbox keeps with an agent's post, to record it the same way after a restart. */
export interface PostMeta {
  readonly toolRuns?: readonly ToolRun[] | undefined;
  readonly replyTo?: ReplyTo | undefined;
  readonly requests?: readonly string[] | undefined;
  readonly after?: ReplyAfter | undefined;
}

/** How an agent's post ended: stored, nothing to post, or the platform refused it. */
export type PostResult =
  | { readonly kind: 'posted'; readonly message: RoomMessage }
  | { readonly kind: 'empty' }
  | { readonly kind: 'failed'; readonly error: unknown };

/** The idempotency key of an outbox entry: its id and creation time (two databases never share one). */
export function outboxKey(entry: Pick<OutboxEntry, 'id' | 'createdAt'>): string {
  return `${entry.id.toString(36)}.${entry.createdAt.toString(36)}`;
}

/**
 * Outbound posting: through the right identity (an agent's own bot, or the bridge), written to the outbox
 * before it is sent, then recorded with the platform ids the post produced, so its echo is recognised as
 * already stored and a restart sends again only what may not have gone out.
 */
export class Poster {
  constructor(
    private readonly deps: {
      readonly recorder: Recorder;
      readonly journal: JournalStore;
      readonly transaction: <T>(work: () => T) => T;
      /** The stored message a platform id belongs to (a resent post found already recorded). */
      readonly stored: (room: Room, platformId: string) => RoomMessage | undefined;
      readonly clock: () => number;
      readonly log: Logger;
    },
  ) {}

  /** Posts an agent's message through its own identity and stores it with its platform ids. */
  agent(room: Room, agent: string, text: string, options: AgentPost = {}): Promise<PostResult> {
    return this.tracked(room, async () => {
      if (!text.trim()) {
        await options.stream?.cancel().catch(() => {});
        return { kind: 'empty' } as const;
      }
      const meta: PostMeta = {
        toolRuns: options.toolRuns,
        replyTo: options.replyTo,
        requests: options.requests,
        after: options.turn?.after,
      };
      const entry = this.write(room, options.turn ? 'reply' : 'action', agent, text, options.turn?.id, meta);
      return this.send(room, entry, options);
    });
  }

  /** Sends an outbox entry a restart left unsent: the platform may have it already, so it is looked for first. */
  resend(room: Room, entry: OutboxEntry, recorded?: (message: RoomMessage) => void): Promise<PostResult> {
    return this.tracked(room, () => this.send(room, entry, { ...(recorded ? { recorded } : {}) }, true));
  }

  /** Posts one of the bridge's own lines (hand-backs, errors, notices). They wake no one. */
  system(room: Room, line: string): Promise<void> {
    // Error lines quote what servers said: known secrets never reach the room or the store.
    const text = redact(line);
    return this.tracked(room, async () => {
      const entry = this.write(room, 'system', null, text);
      await this.send(room, entry, {});
    });
  }

  /** Posts a line that is not part of the room's history (a private chat shown to operators). */
  unrecorded(room: Room, text: string): Promise<readonly string[]> {
    return this.tracked(room, async () => {
      const { messageIds } = await room.adapter.post({ channel: room.state.row.channel, agent: null, text });
      room.state.remember(messageIds);
      return messageIds;
    });
  }

  private write(
    room: Room,
    purpose: OutboxPurpose,
    agent: string | null,
    text: string,
    workId?: number,
    meta?: PostMeta,
  ): OutboxEntry {
    return this.deps.journal.addPost({
      channelId: room.state.row.id,
      workId: workId ?? null,
      purpose,
      agent,
      text,
      ...(meta ? { meta } : {}),
      now: this.deps.clock(),
    });
  }

  /** Sends an entry, then records it, marks it sent and runs `recorded`, in one transaction. */
  private async send(
    room: Room,
    entry: OutboxEntry,
    options: Pick<AgentPost, 'stream' | 'recorded'>,
    resend = false,
  ): Promise<PostResult> {
    const { journal, log } = this.deps;
    let ids: readonly string[];
    try {
      const posted = options.stream
        ? await options.stream.finish(entry.text)
        : await room.adapter.post(
            { channel: room.state.row.channel, agent: entry.agent, text: entry.text },
            { key: outboxKey(entry), ...(resend ? { resendSince: entry.createdAt } : {}) },
          );
      ids = posted.messageIds;
    } catch (error) {
      journal.failed(entry.id);
      if (entry.agent === null) {
        // A line the platform refused is still part of the history the agents read.
        log.error({ err: error, room: room.key }, 'posting a system message failed');
        this.record(room, entry, []);
        return { kind: 'failed', error };
      }
      log.error({ err: error, room: room.key, agent: entry.agent }, 'posting a reply failed');
      return { kind: 'failed', error };
    }
    return this.deps.transaction(() => {
      const message = this.record(room, entry, ids) ?? (ids[0] ? this.deps.stored(room, ids[0]) : undefined);
      journal.sent(entry.id, ids);
      if (message?.kind !== 'agent') return { kind: 'empty' } as const;
      try {
        options.recorded?.(message);
      } catch (error) {
        log.error({ err: error, room: room.key }, 'handling a posted reply failed');
      }
      return { kind: 'posted', message } as const;
    });
  }

  private record(room: Room, entry: OutboxEntry, ids: readonly string[]): RoomMessage | null {
    const meta = (entry.meta ?? {}) as PostMeta;
    return this.deps.recorder.record(room, {
      author: entry.agent ?? 'system',
      authorId: entry.agent ?? 'system',
      kind: entry.agent === null ? 'system' : 'agent',
      text: entry.text,
      toolRuns: meta.toolRuns,
      replyTo: meta.replyTo,
      requests: meta.requests,
      at: this.deps.clock(),
      platformIds: ids,
    });
  }

  /** Runs a post-and-store in a room, visible to echoes arriving meanwhile. */
  private async tracked<T>(room: Room, work: () => Promise<T>): Promise<T> {
    const done = work();
    room.posting.add(done);
    try {
      return await done;
    } finally {
      room.posting.delete(done);
    }
  }
}
