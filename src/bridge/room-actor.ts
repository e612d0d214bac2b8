/**
 * One room's serial actor: it takes the room's events one at a time, asks `decide` for the decision from one
 * snapshot of the room, commits the decision's writes in one store call, and only then hands the effects on. Notes
 * from other rooms and outcomes of its own effects go before platform events that arrive later.
 */

import { randomUUID } from 'node:crypto';
import { LeaseLostError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ChatAdapter } from '../ports.js';
import { decide } from '../room/decide.js';
import type { Decision, Effect, Write } from '../room/effects.js';
import type { RoomEvent } from '../room/events.js';
import type { RoomSetup, RoomState } from '../room/state.js';
import type { Fence, NoteRecord, RoomRecord, RoomStore } from '../store/port.js';

/** What an event's decision came to. */
export type Taken = 'done' | 'duplicate' | 'stopped' | 'failed';

/** An event for the room, without its time (the actor stamps it when it is decided). */
export type Incoming = DistributiveOmit<RoomEvent, 'now'>;
type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

interface Queued {
  readonly event: Incoming;
  /** The shell's own writes to commit with the decision (a note taken). */
  readonly extra?: readonly Write[] | undefined;
  readonly done: (taken: Taken) => void;
}

export interface ActorDeps {
  readonly store: RoomStore;
  /** Carries out a decision's effects (after its writes are committed). */
  readonly effects: (actor: RoomActor, effects: readonly Effect[]) => void;
  /** Sends a note (stored with the decision that wrote it) to its room. */
  readonly notes: (note: NoteRecord) => void;
  /** Other rooms, for the actions of this room's agents (made on first use). */
  readonly others: OtherRooms;
  /** Fresh request ids, unique across rooms: the next one, and how many a decision took. */
  readonly ids: { next(): number; took(count: number): void };
  readonly clock: () => number;
  readonly log: Logger;
  /**
   * With bridges sharing the store: the room's fencing token, committed with each decision; none when this bridge no
   * longer surely holds the room (nothing more is decided here), and told when a decision was refused under it.
   */
  readonly lease?: { fence(roomId: number): Fence | undefined; forget(roomId: number): void } | undefined;
}

/** How a room reaches other rooms: by platform and channel (a DM: with its agent), or by key. */
export interface OtherRooms {
  get(platform: string, channel: string, directAgent?: string): Promise<RoomActor>;
  byKey(key: string): Promise<RoomActor | undefined>;
}

export class RoomActor {
  private readonly urgent: Queued[] = [];
  private readonly events: Queued[] = [];
  private draining = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** Why the store could not take the last decision that failed (for the line the room is told). */
  lastFailure: unknown;

  constructor(
    readonly record: RoomRecord,
    readonly setup: RoomSetup,
    private current: RoomState,
    readonly adapter: ChatAdapter,
    private readonly deps: ActorDeps,
  ) {}

  get key(): string {
    return this.record.key;
  }

  /** Other rooms, for this room's agents' actions. */
  get others(): OtherRooms {
    return this.deps.others;
  }

  /** The room's state as last committed. */
  get state(): RoomState {
    return this.current;
  }

  /**
   * Queues an event; resolves once its decision is committed (or found to be a duplicate). `urgent`: an outcome of
   * this bridge's own work or a note, taken before platform events still waiting.
   */
  deliver(event: Incoming, options: { urgent?: boolean; extra?: readonly Write[] } = {}): Promise<Taken> {
    if (this.stopped) return Promise.resolve('stopped');
    return new Promise<Taken>((done) => {
      (options.urgent ? this.urgent : this.events).push({ event, extra: options.extra, done });
      void this.drain();
    });
  }

  /** True while the room has work: events to decide, a turn or post under way, or asks waiting to start. */
  get busy(): boolean {
    const { current, queue, posts, batch } = this.current;
    return (
      this.draining ||
      this.urgent.length > 0 ||
      this.events.length > 0 ||
      current !== null ||
      posts.length > 0 ||
      batch !== null ||
      queue.some((ask) => !ask.held)
    );
  }

  /** Resolves when the room has nothing to do (see `busy`). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Wakes idle() waiters when the room has become quiet (effects call this when work they ran ends). */
  settle(): void {
    if (this.busy) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Stops taking events (shutdown): what is queued is left for the next start. */
  stop(): void {
    this.stopped = true;
    for (const queued of [...this.urgent.splice(0), ...this.events.splice(0)]) queued.done('stopped');
    this.draining = false;
    this.settle();
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        if (this.stopped) return;
        const next = this.urgent.shift() ?? this.events.shift();
        if (!next) break;
        next.done(await this.take(next));
      }
    } finally {
      this.draining = false;
      this.settle();
    }
  }

  private async take(queued: Queued): Promise<Taken> {
    // Stamped in place (each queued event is the shell's own fresh object): a copy would cost more than the rest.
    const event = queued.event as RoomEvent & { now: number };
    event.now = this.deps.clock();
    let decision: Decision;
    try {
      decision = decide(this.setup, this.current, event, { nextRequestId: this.deps.ids.next() });
    } catch (error) {
      // A bug in the rules must not take the room down: the event is dropped and the log says which.
      this.deps.log.error({ err: error, room: this.key, event: event.type }, 'the room could not decide on an event');
      return 'done';
    }
    this.deps.ids.took(decision.requestsOpened);
    // Notes to other rooms are stored with the decision, so a crash cannot lose one.
    const notes: NoteRecord[] = decision.effects.flatMap((effect) =>
      effect.type === 'note' ? [{ id: randomUUID(), room: effect.room, note: effect.note }] : [],
    );
    const writes: Write[] = [
      ...decision.writes,
      ...notes.map((note) => ({ type: 'note' as const, ...note })),
      ...(queued.extra ?? []),
    ];
    let result: Awaited<ReturnType<RoomStore['commit']>>;
    const { lease } = this.deps;
    const fence = lease?.fence(this.record.id);
    if (lease && !fence) return 'stopped';
    try {
      result = await this.deps.store.commit(this.record.id, writes, decision.state, fence);
    } catch (error) {
      if (error instanceof LeaseLostError) {
        lease?.forget(this.record.id);
        return 'stopped';
      }
      this.deps.log.error({ err: error, room: this.key, event: event.type }, 'the store could not take a decision');
      this.lastFailure = error;
      return 'failed';
    }
    if (result === 'duplicate') return 'duplicate';
    if (this.stopped) return 'stopped';
    this.current = decision.state;
    this.deps.effects(
      this,
      decision.effects.filter((effect) => effect.type !== 'note'),
    );
    for (const note of notes) this.deps.notes(note);
    return 'done';
  }
}
