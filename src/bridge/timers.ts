/** Deadlines, as events: a request's deadline is delivered to its room when it falls due. */
import type { RoomActor } from './room-actor.js';

export class Timers {
  private readonly pending = new Map<string, NodeJS.Timeout>();

  constructor(private readonly clock: () => number) {}

  /** Delivers the deadline of `request` to the room at `at` (ms since the epoch); once per request. */
  at(actor: RoomActor, at: number, request: number): void {
    const key = `${actor.key}#${request}`;
    clearTimeout(this.pending.get(key));
    const timer = setTimeout(
      () => {
        this.pending.delete(key);
        void actor.deliver({ type: 'deadline', request }, { urgent: true });
      },
      Math.max(0, at - this.clock()),
    );
    // A deadline alone keeps nothing running: a room waiting only for one is idle.
    timer.unref();
    this.pending.set(key, timer);
  }

  stop(): void {
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}
