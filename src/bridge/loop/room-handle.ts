/**
 * What an executor (turns, batches, posts, timers, agents' messaging) may know of a room: a small value — its key,
 * store id, platform, channel, kind and adapter — and one way back, `report`. A turn's answer, a post's outcome, a
 * deadline: each comes back to the room as an event in its queue, taken before platform events that arrive later.
 * An executor never reads or changes the room's state (a child reports to its parent by event).
 */
import type { ChatAdapter } from '../../ports.js';
import type { RoomEvent } from '../../room/events.js';
import type { RoomSetup } from '../../room/state.js';

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/** An event for a room, without its time (the room's loop stamps it when it is decided). */
export type RoomInput = DistributiveOmit<RoomEvent, 'now'>;

/** What executors report: the outcomes of the work a decision asked for. */
export type Outcome = Extract<
  RoomInput,
  {
    type: 'answer' | 'batch' | 'posted' | 'post-failed' | 'deadline' | 'chat-expired' | 'approval' | 'approval-expired';
  }
>;

export interface RoomHandle {
  /** `platform:channel`. */
  readonly key: string;
  /** The room's row in the store. */
  readonly id: number;
  readonly platform: string;
  readonly channel: string;
  readonly kind: RoomSetup['kind'];
  /** The platform the room is on (posts, previews, typing). */
  readonly adapter: ChatAdapter;
  /**
   * An outcome of work the room asked for: the room's next event (before platform events still waiting). Resolves
   * once the room has taken it; most executors do not wait.
   */
  report(outcome: Outcome): Promise<void>;
}
