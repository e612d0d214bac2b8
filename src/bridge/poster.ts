/**
 * Carries out the `post` effect: the post goes out through the right identity (an agent's own bot, or the bridge),
 * with an idempotency key from the room and the post's id, finishing the reply's streamed preview when one is shown;
 * the platform's ids (or its refusal) go back to the room. Echoes of a post wait here until it is recorded.
 */
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import type { StreamingPost } from '../ports.js';
import type { PendingPost } from '../room/state.js';
import { redact } from '../secrets.js';
import type { RoomActor } from './room-actor.js';

/** The idempotency key of a post: room, post and time, so that two databases never share one (<= 20 characters). */
export function postKey(roomId: number, post: Pick<PendingPost, 'id' | 'at'>): string {
  return `${roomId.toString(36)}.${post.id.toString(36)}.${post.at.toString(36)}`.slice(0, 20);
}

export class Poster {
  /** Posts under way per room, until the room has recorded them. */
  private readonly inFlight = new Map<string, Set<Promise<void>>>();

  constructor(
    private readonly deps: {
      /** The reply's preview, if one is shown (taken: the post finishes it). */
      readonly preview: (room: string, ask: number) => StreamingPost | undefined;
      /** Resolves once the adapters are connected (posts a restart left wait for it, in order). */
      readonly ready: Promise<void>;
      readonly log: Logger;
    },
  ) {}

  send(actor: RoomActor, post: PendingPost, resend = false): void {
    const work = this.post(actor, post, resend);
    const set = this.inFlight.get(actor.key) ?? new Set();
    set.add(work);
    this.inFlight.set(actor.key, set);
    void work.finally(() => set.delete(work));
  }

  /** Resolves when the room's posts under way are recorded (an echo is then recognised as stored). */
  async settled(room: string): Promise<void> {
    const set = this.inFlight.get(room);
    if (set && set.size > 0) await Promise.allSettled([...set]);
  }

  private async post(actor: RoomActor, post: PendingPost, resend: boolean): Promise<void> {
    // The bridge's lines quote what servers said: known secrets never reach the room.
    const text = post.agent === null ? redact(post.text) : post.text;
    const stream = post.ask !== undefined ? this.deps.preview(actor.key, post.ask) : undefined;
    let ids: readonly string[];
    await this.deps.ready;
    try {
      const posted = stream
        ? await stream.finish(text)
        : await actor.adapter.post(
            { channel: actor.record.channel, agent: post.agent, text },
            { key: postKey(actor.record.id, post), ...(resend ? { resendSince: post.at } : {}) },
          );
      ids = posted.messageIds;
    } catch (error) {
      this.deps.log.error({ err: error, room: actor.key, agent: post.agent }, 'posting failed');
      await actor.deliver(
        { type: 'post-failed', post: post.id, reason: redact(describeError(error)) },
        { urgent: true },
      );
      return;
    }
    await actor.deliver({ type: 'posted', post: post.id, platformIds: ids }, { urgent: true });
  }
}
