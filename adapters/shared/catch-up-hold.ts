/**
 * Live messages wait while their room catches up: what the room missed reaches the bridge first, so the history
 * stays in order. A catch-up runs for one room, or for every room at once (a start, a reconnect that reads every
 * room); the messages it held are then delivered in arrival order, and those that arrive meanwhile join the end
 * of the line, so none overtakes one that was held.
 */
import type { Logger } from '../../src/log.js';

type Delivery = () => Promise<void>;

interface Held {
  readonly line: Delivery[];
  readonly done: Promise<void>;
}

/** The key of a catch-up of every room (no room id is empty). */
const EVERY_ROOM = '';

export class CatchUpHold {
  private readonly held = new Map<string, Held>();

  constructor(private readonly deps: { readonly log: Logger }) {}

  /** Whether a room's live messages wait now: its own catch-up, or one of every room, is running. */
  holding(room: string): boolean {
    return this.held.has(EVERY_ROOM) || this.held.has(room);
  }

  /**
   * A live message of a room that is catching up waits: `deliver` runs once the catch-up is done, after the
   * messages held before it (true: it waits). False: nothing is held, deliver it now.
   */
  hold(room: string, deliver: Delivery): boolean {
    const held = this.held.get(EVERY_ROOM) ?? this.held.get(room);
    if (!held) return false;
    held.line.push(deliver);
    return true;
  }

  /**
   * Runs a room's catch-up while its live messages wait, then delivers them. While one runs for the room, a second
   * is not started: the one under way is awaited. A failed catch-up still delivers, then rejects.
   */
  room(room: string, catchUp: () => Promise<void>): Promise<void> {
    if (room === EVERY_ROOM) throw new Error('a room id is never empty');
    return this.run(room, catchUp);
  }

  /** The same for every room at once. */
  everyRoom(catchUp: () => Promise<void>): Promise<void> {
    return this.run(EVERY_ROOM, catchUp);
  }

  private run(key: string, catchUp: () => Promise<void>): Promise<void> {
    const running = this.held.get(key);
    if (running) return running.done;
    const line: Delivery[] = [];
    // The room is held from now on; the catch-up itself starts a moment later.
    const done = Promise.resolve()
      .then(catchUp)
      .finally(async () => {
        await this.deliver(line);
        this.held.delete(key);
      });
    this.held.set(key, { line, done });
    return done;
  }

  /** Delivers the line in order, including what joins it meanwhile; one failure does not stop the rest. */
  private async deliver(line: Delivery[]): Promise<void> {
    for (let next = line.shift(); next; next = line.shift()) {
      try {
        await next();
      } catch (error) {
        this.deps.log.error({ err: error }, 'a message held during a catch-up could not be delivered');
      }
    }
  }
}
