/** Deadlines, as events: a request's deadline (an approval's, a chat request's expiry) is delivered to its room when it falls due. */
import type { RoomHandle } from '../loop/room-handle.js';

/** A request's deadline: when it falls due (ms since the epoch, by the bridge's clock), and where. */
export interface Deadline {
  readonly room: string;
  readonly request: number;
  readonly at: number;
}

/**
 * Runs `fire` once when the deadline falls due; the function it returns cancels it. A waiting deadline alone must
 * keep nothing running: a room waiting only for one is idle.
 */
export type Scheduler = (deadline: Deadline, fire: () => void) => () => void;

/** The scheduler of a running bridge: a timer of the process that does not keep it alive. */
export function processScheduler(clock: () => number): Scheduler {
  return ({ at }, fire) => {
    const timer = setTimeout(fire, Math.max(0, at - clock()));
    timer.unref();
    return () => clearTimeout(timer);
  };
}

export class Timers {
  private readonly pending = new Map<string, () => void>();

  constructor(private readonly schedule: Scheduler) {}

  /** Delivers the deadline of `request` to the room at `at` (ms since the epoch); once per request. */
  at(room: RoomHandle, at: number, request: number): void {
    const key = `${room.key}#${request}`;
    this.pending.get(key)?.();
    const cancel = this.schedule({ room: room.key, request, at }, () => {
      this.pending.delete(key);
      void room.report({ type: 'deadline', request });
    });
    this.pending.set(key, cancel);
  }

  /** Delivers an approval's deadline (rule 17) to the room at `at`; once per approval. */
  approvalAt(room: RoomHandle, at: number, id: string): void {
    const key = `${room.key}#${id}`;
    this.pending.get(key)?.();
    const cancel = this.schedule({ room: room.key, request: -1, at }, () => {
      this.pending.delete(key);
      void room.report({ type: 'approval-expired', id });
    });
    this.pending.set(key, cancel);
  }

  /** Delivers a private chat request's expiry to its pair's room at `at`; once per request. */
  chatAt(room: RoomHandle, at: number, chat: number): void {
    const key = `${room.key}#chat${chat}`;
    this.pending.get(key)?.();
    const cancel = this.schedule({ room: room.key, request: -1, at }, () => {
      this.pending.delete(key);
      void room.report({ type: 'chat-expired', chat });
    });
    this.pending.set(key, cancel);
  }

  stop(): void {
    for (const cancel of this.pending.values()) cancel();
    this.pending.clear();
  }
}
