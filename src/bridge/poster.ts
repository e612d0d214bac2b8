import type { Logger } from '../log.js';
import type { StreamingPost } from '../ports.js';
import type { ReplyTo, RoomMessage, ToolRun } from '../room/types.js';
import { redact } from '../secrets.js';
import type { Recorder } from './recorder.js';
import type { Room } from './rooms.js';

export interface AgentPost {
  readonly toolRuns?: readonly ToolRun[] | undefined;
  /** What the turn answered: carried to the recorded message. */
  readonly replyTo?: ReplyTo | undefined;
  /** Who this message asks for a reply, when the caller decides (messaging actions: nobody). */
  readonly requests?: readonly string[] | undefined;
  /** The reply was shown while written: finish it instead of posting anew. */
  readonly stream?: StreamingPost | undefined;
}

/** How an agent's post ended: stored, nothing to post, or the platform refused it. */
export type PostResult =
  | { readonly kind: 'posted'; readonly message: RoomMessage }
  | { readonly kind: 'empty' }
  | { readonly kind: 'failed'; readonly error: unknown };

/**
 * Outbound posting: through the right identity (an agent's own bot, or the bridge), then recorded with
 * the platform ids the post produced, so its echo is recognised as already stored.
 */
export class Poster {
  constructor(
    private readonly deps: {
      readonly recorder: Recorder;
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
      let ids: readonly string[];
      try {
        const posted = options.stream
          ? await options.stream.finish(text)
          : await room.adapter.post({ channel: room.state.row.channel, agent, text });
        ids = posted.messageIds;
      } catch (error) {
        this.deps.log.error({ err: error, room: room.key, agent }, 'posting a reply failed');
        return { kind: 'failed', error } as const;
      }
      const message = this.deps.recorder.record(room, {
        author: agent,
        authorId: agent,
        kind: 'agent',
        text,
        toolRuns: options.toolRuns,
        replyTo: options.replyTo,
        requests: options.requests,
        at: this.deps.clock(),
        platformIds: ids,
      });
      // Its echo cannot have been stored first: echoes wait for this room's posts.
      return message ? ({ kind: 'posted', message } as const) : ({ kind: 'empty' } as const);
    });
  }

  /** Posts one of the bridge's own lines (hand-backs, errors, notices). They wake no one. */
  system(room: Room, line: string): Promise<void> {
    // Error lines quote what servers said: known secrets never reach the room or the store.
    const text = redact(line);
    return this.tracked(room, async () => {
      let ids: readonly string[] = [];
      try {
        ids = (await room.adapter.post({ channel: room.state.row.channel, agent: null, text })).messageIds;
      } catch (error) {
        this.deps.log.error({ err: error, room: room.key }, 'posting a system message failed');
      }
      this.deps.recorder.record(room, {
        author: 'system',
        authorId: 'system',
        kind: 'system',
        text,
        at: this.deps.clock(),
        platformIds: ids,
      });
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
