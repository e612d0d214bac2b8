/**
 * A gate in front of a store's room commits: a commit that stores a message with a chosen text waits at the gate
 * (a slow disk, a database lock) until it is let through, or is refused as a store that cannot write refuses it.
 * Every other commit goes straight through.
 */
import { StoreError } from '../../src/errors.js';
import type { Write } from '../../src/room/effects.js';
import type { RoomStore, StorePort } from '../../src/store/port.js';

type Mode = 'open' | 'hold' | 'refuse';

export class CommitGate {
  private mode: Mode = 'open';
  private readonly waiting: Array<{ pass: () => void; refuse: (error: Error) => void }> = [];
  /** Commits of the gated text that arrived at the gate (held or refused), so far. */
  arrived = 0;

  constructor(private readonly text: string) {}

  /** The gated commits wait until `open` (or `drop`). */
  hold(): void {
    this.mode = 'hold';
  }

  /** The gated commits fail as a store that cannot write fails them (a retryable StoreError), until `open`. */
  refuse(): void {
    this.mode = 'refuse';
  }

  /** Lets the waiting commits through, and every later one. */
  open(): void {
    this.mode = 'open';
    for (const waiting of this.waiting.splice(0)) waiting.pass();
  }

  /** The waiting commits never happen (a process killed before its commit); later ones go through. */
  drop(): void {
    this.mode = 'open';
    for (const waiting of this.waiting.splice(0)) waiting.refuse(new Error('the bridge died before its commit'));
  }

  /** How many gated commits wait now. */
  get held(): number {
    return this.waiting.length;
  }

  /** `store`, with its room commits behind this gate. */
  wrap<T extends StorePort>(store: T): T {
    const rooms = store.rooms;
    const commit: RoomStore['commit'] = async (roomId, writes, state, fence) => {
      if (this.mode !== 'open' && writes.some((write) => this.gated(write))) {
        this.arrived += 1;
        if (this.mode === 'refuse') throw new StoreError('database or disk is full', { retryable: true });
        await new Promise<void>((pass, refuse) => this.waiting.push({ pass, refuse }));
      }
      return rooms.commit(roomId, writes, state, fence);
    };
    const gatedRooms = forward(rooms, { commit });
    return forward(store, { rooms: gatedRooms } as Partial<T>);
  }

  private gated(write: Write): boolean {
    return write.type === 'message' && write.message.text === this.text;
  }
}

/** `target` with `overrides` in front; everything else (methods bound to it) passes through. */
function forward<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(object, property, object) as unknown;
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}
