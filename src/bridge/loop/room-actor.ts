/**
 * One room's serial actor: it takes the room's events one at a time, asks `decide` for the decision from one
 * snapshot of the room, commits the decision's writes in one store call, and only then hands the effects on. Notes
 * from other rooms and outcomes of its own effects go before platform events that arrive later. A decision the store
 * cannot take (a full disk, a lock held too long) is tried again, with growing waits, before anything after it: what
 * the room receives meanwhile is held in memory, in order, within a bound (room-queue.ts).
 */

import { randomUUID } from 'node:crypto';
import { LeaseLostError, StoreError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ChatAdapter } from '../../ports.js';
import { parkedBehindCard } from '../../room/approvals.js';
import { decide } from '../../room/decide.js';
import type { Decision, Effect } from '../../room/effects.js';
import type { RoomEvent } from '../../room/events.js';
import type { RoomSetup, RoomState } from '../../room/state.js';
import type { Fence, NoteRecord, RoomRecord, RoomStore } from '../../store/port.js';
import { type DecisionTrace, traceDecision } from '../../trace/decision.js';
import { Pause } from '../backoff.js';
import type { CatchUpMarks } from '../inbound/catch-up-marks.js';
import type { RoomHandle, RoomInput } from './room-handle.js';
import { type Queued, RoomQueue, type Taken } from './room-queue.js';
import type { StoreOutage } from './store-outage.js';

export type { Taken } from './room-queue.js';

export interface ActorDeps {
  readonly store: RoomStore;
  /** Carries out a decision's effects (after its writes are committed). */
  readonly effects: (room: RoomHandle, effects: readonly Effect[]) => void;
  /** Sends a note (stored with the decision that wrote it) to its room. */
  readonly notes: (note: NoteRecord) => void;
  /** Fresh request ids, unique across rooms: the next one, and how many a decision took. */
  readonly ids: { next(): number; took(count: number): void };
  /** Keeps count of what waits while the store fails, and tells the room. */
  readonly outage: Pick<StoreOutage, 'failed' | 'recovered' | 'hold' | 'count' | 'release' | 'back'>;
  readonly clock: () => number;
  readonly log: Logger;
  /** Woken after a decision that stored messages is committed (their embedding starts, in the background). */
  readonly embedding?: { wake(): void } | undefined;
  /** Told of each platform message the room stored (where catch-ups start). */
  readonly marks?: Pick<CatchUpMarks, 'stored'> | undefined;
  /**
   * With bridges sharing the store: the room's fencing token, committed with each decision; none when this bridge no
   * longer surely holds the room (nothing more is decided here), and told when a decision was refused under it.
   */
  readonly lease?: { fence(roomId: number): Fence | undefined; forget(roomId: number): void } | undefined;
}

export class RoomActor {
  /** The events waiting, and what is held while the store cannot write. */
  private readonly queue: RoomQueue;
  private draining = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  private readonly pause = new Pause();
  /** `platform:channel`. */
  readonly key: string;
  /** What the executors of this room's effects know of it, and their one way back. */
  readonly handle: RoomHandle;

  constructor(
    readonly record: RoomRecord,
    readonly setup: RoomSetup,
    private current: RoomState,
    readonly adapter: ChatAdapter,
    private readonly deps: ActorDeps,
  ) {
    this.key = record.key;
    this.queue = new RoomQueue(record, deps.outage);
    this.handle = {
      key: record.key,
      id: record.id,
      platform: record.platform,
      channel: record.channel,
      kind: setup.kind,
      adapter,
      report: async (outcome) => {
        await this.deliver(outcome, { urgent: true });
      },
    };
  }

  /** The room's state as last committed. */
  get state(): RoomState {
    return this.current;
  }

  /**
   * Queues an event; resolves once its decision is committed (or found to be a duplicate) — or, for a platform event
   * while the store cannot write, once it is held in memory (`held`: stored later) or not kept (`refused`). `urgent`:
   * an outcome of this bridge's own work or a note, taken before platform events still waiting (it waits for the
   * store, however long). `afterHeld`: what later became of an event told `held` — decided, or `stopped` when the
   * room was given up (its lease lapsed in the outage) before the store took it.
   */
  deliver(event: RoomInput, options: { urgent?: boolean; afterHeld?: (taken: Taken) => void } = {}): Promise<Taken> {
    if (this.stopped) return Promise.resolve('stopped');
    return new Promise<Taken>((resolve) => {
      let told: Taken | undefined;
      const done = (taken: Taken) => {
        if (told === 'held') options.afterHeld?.(taken);
        if (told !== undefined) return;
        told = taken;
        resolve(taken);
      };
      this.queue.push(event, options.urgent === true, done);
      void this.drain();
    });
  }

  /**
   * Resolves true once the room has taken every event that arrived before this call (stored, or found a duplicate),
   * false when it stopped first. Decides nothing: a live message's catch-up mark waits on it.
   */
  taken(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    if (!this.draining && this.queue.length === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      this.queue.mark((taken) => resolve(taken === 'done'));
      void this.drain();
    });
  }

  /** True while the room has work: events to decide, a turn or post under way, or asks waiting to start. */
  get busy(): boolean {
    const { current, queue, posts, batch } = this.current;
    return (
      this.draining ||
      this.queue.length > 0 ||
      current !== null ||
      posts.length > 0 ||
      batch !== null ||
      // An ask parked behind its approval card waits for a person, not for the room.
      queue.some((ask) => !ask.held && !parkedBehindCard(this.current, ask.id))
    );
  }

  /** Resolves when the room has nothing to do (see `busy`). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Wakes idle() waiters when the room has become quiet (after each event it took). */
  private wakeIdle(): void {
    if (this.busy) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Stops taking events (shutdown): what is queued is left for the next start. */
  stop(): void {
    this.stopped = true;
    this.pause.stop();
    this.queue.clear();
    this.draining = false;
    this.wakeIdle();
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
        const next = this.queue.next();
        if (!next) break;
        next.done(next.event === null ? 'done' : await this.take(next));
        this.queue.taken(next);
      }
    } finally {
      this.draining = false;
      this.wakeIdle();
    }
  }

  /** Decides on the event, commits, hands the effects on: in the event's trace (a span) when it has one. */
  private take(queued: Queued): Promise<Taken> {
    return traceDecision(this.key, queued.event, this.current, (traced) => this.decideAndCommit(queued, traced));
  }

  private async decideAndCommit(queued: Queued, traced: DecisionTrace | undefined): Promise<Taken> {
    // Stamped in place (each queued event is the shell's own fresh object): a copy would cost more than the rest.
    const event = queued.event as RoomEvent & { now: number };
    if (queued.event === null) return 'done';
    // Decided once: each try commits the same decision (nothing else changes the room meanwhile).
    event.now = this.deps.clock();
    let decision: Decision;
    try {
      decision = decide(this.setup, this.current, event, {
        nextRequestId: this.deps.ids.next(),
        idBlock: randomUUID(),
      });
    } catch (error) {
      // A bug in the rules must not take the room down: the event is dropped and the log says which.
      this.deps.log.error({ err: error, room: this.key, event: event.type }, 'the room could not decide on an event');
      return 'done';
    }
    traced?.decided(decision);
    this.deps.ids.took(decision.requestsOpened);
    const { writes } = decision;
    for (let tries = 1; ; tries++) {
      let result: Awaited<ReturnType<RoomStore['commit']>>;
      const { lease } = this.deps;
      const fence = lease?.fence(this.record.id);
      if (lease && !fence) return 'stopped';
      try {
        const commit = () => this.deps.store.commit(this.record.id, writes, decision.state, fence);
        result = await (traced ? traced.commit(tries, commit) : commit());
      } catch (error) {
        if (error instanceof LeaseLostError) {
          lease?.forget(this.record.id);
          return 'stopped';
        }
        if (this.stopped) return 'stopped';
        if (!(error instanceof StoreError && error.retryable)) {
          // A write the store would refuse again (a bug): trying again would hold the room for good.
          this.deps.log.error({ err: error, room: this.key, event: event.type }, 'the store refused a decision');
          this.queue.recovered(queued);
          return 'done';
        }
        // Nothing was stored and nothing was done: the same event is decided again after the wait.
        const wait = this.deps.outage.failed(this.record, error, tries);
        this.queue.failed(queued);
        // Or at once when the store is seen writing again.
        await this.pause.wait(wait, this.deps.outage.back);
        if (this.stopped) return 'stopped';
        continue;
      }
      this.queue.recovered(queued);
      // A try that failed may have been committed all the same (the connection lost after COMMIT went out): then this
      // try finds its message stored, and the room goes on from the decision the store has.
      if (result === 'duplicate' && !(tries > 1 && (await this.committedBefore(decision)))) return 'duplicate';
      if (this.deps.embedding && writes.some((write) => write.type === 'message')) this.deps.embedding.wake();
      if (this.stopped) return 'stopped';
      this.current = decision.state;
      const id = event.type === 'message' ? event.message.platformIds[0] : undefined;
      if (id !== undefined) this.deps.marks?.stored(this.record, id);
      const effects = decision.effects.filter((effect) => effect.type !== 'note');
      if (traced) traced.within(() => this.deps.effects(this.handle, effects));
      else this.deps.effects(this.handle, effects);
      for (const effect of decision.effects) {
        if (effect.type === 'note') this.deps.notes({ id: effect.id, room: effect.room, note: effect.note });
      }
      return 'done';
    }
  }

  /** Whether the store holds `decision` already (it stored a new message, and the room's newest is that one). */
  private async committedBefore(decision: Decision): Promise<boolean> {
    if (decision.state.seq === this.current.seq) return false;
    try {
      const stored = await this.deps.store.open(this.record.platform, this.record.channel);
      return stored.state?.seq === decision.state.seq;
    } catch {
      return false;
    }
  }
}
