/**
 * A room's queue of events, with the store-outage policy: outcomes of the bridge's own work and notes go before
 * platform events that arrive later. While the store cannot take a decision, the platform events waiting (and the one
 * being decided) are held in memory — their senders told `held` and going on — within the bridge's bound
 * (HELD_MESSAGES_MAX, counted by StoreOutage): past it an event is `refused`, not kept. Outcomes and agents' actions
 * are never refused: they wait, however long (a turn's tool call waits for its action's result).
 */
import type { RoomRecord } from '../../store/port.js';
import type { RoomInput } from './room-handle.js';
import type { StoreOutage } from './store-outage.js';

/**
 * What an event's decision came to. `held`: the store cannot write now; the event waits in memory and is decided
 * once it can. `refused`: the store cannot write and too much waits already: it is not kept.
 */
export type Taken = 'done' | 'duplicate' | 'stopped' | 'held' | 'refused';

export interface Queued {
  /** None: a mark in the queue, taken once every event before it is. */
  readonly event: RoomInput | null;
  /** Says what became of the event (once: a `held` event is stored later, or not at all). */
  readonly done: (taken: Taken) => void;
  /** Came from a platform or an operator (`fromPlatform`): its sender goes on while the store fails. */
  readonly platform: boolean;
  /** Counted among the events the outage holds in memory. */
  counted: boolean;
}

/**
 * Events from a platform (or the start): held while the store fails, their senders going on. Outcomes of the bridge's
 * own work and agents' actions wait instead.
 */
const fromPlatform = (event: RoomInput) =>
  event.type === 'message' ||
  event.type === 'edit' ||
  event.type === 'command' ||
  event.type === 'catch-up' ||
  event.type === 'restart';

/** Platform events an outage counts against its bound, and may refuse past it (a catch-up's end or a restart never). */
const countable = (event: RoomInput | null) =>
  event !== null && (event.type === 'message' || event.type === 'edit' || event.type === 'command');

export class RoomQueue {
  private readonly urgent: Queued[] = [];
  private readonly events: Queued[] = [];
  /** The store could not take the event being decided: it is tried again, and what arrives waits in memory. */
  private failing = false;

  constructor(
    private readonly record: RoomRecord,
    private readonly outage: Pick<StoreOutage, 'recovered' | 'hold' | 'count' | 'release'>,
  ) {}

  /** Events (and marks) queued: a field the loop reads, kept as the queue changes. */
  length = 0;

  private resize(): void {
    this.length = this.urgent.length + this.events.length;
  }

  /** Queues an event: `urgent` ones (outcomes, notes) before platform events still waiting. */
  push(event: RoomInput, urgent: boolean, done: (taken: Taken) => void): void {
    const queued: Queued = { event, done, platform: !urgent && fromPlatform(event), counted: false };
    if (queued.platform && this.failing) {
      if (countable(event)) {
        if (!this.outage.hold()) {
          done('refused');
          return;
        }
        queued.counted = true;
      }
      done('held');
    }
    (urgent ? this.urgent : this.events).push(queued);
    this.resize();
  }

  /** A mark behind every event queued now: `done` once they are taken. */
  mark(done: (taken: Taken) => void): void {
    this.events.push({ event: null, done, platform: false, counted: false });
    this.resize();
  }

  /** The next event to decide. */
  next(): Queued | undefined {
    const queued = this.urgent.shift() ?? this.events.shift();
    this.resize();
    return queued;
  }

  /** `queued` is taken (decided, or dropped): it no longer counts against the outage's bound. */
  taken(queued: Queued): void {
    if (queued.counted) this.outage.release();
  }

  /** Everything still queued, told `stopped` (a shutdown, a room given up): it is left for the next start. */
  clear(): void {
    const left = [...this.urgent.splice(0), ...this.events.splice(0)];
    this.resize();
    for (const queued of left) queued.done('stopped');
    this.outage.release(left.filter((queued) => queued.counted).length);
  }

  /**
   * The store failed on `parked`: it and the platform events waiting behind it are held in memory (within the
   * bound: past it, an event is not kept); their senders go on.
   */
  failed(parked: Queued): void {
    if (this.failing) return;
    this.failing = true;
    if (parked.platform) {
      if (countable(parked.event) && !parked.counted) {
        parked.counted = true;
        this.outage.count(1);
      }
      parked.done('held');
    }
    const kept: Queued[] = [];
    for (const queued of this.events) {
      if (!queued.platform) {
        kept.push(queued);
        continue;
      }
      if (countable(queued.event) && !queued.counted) {
        if (!this.outage.hold()) {
          queued.done('refused');
          continue;
        }
        queued.counted = true;
      }
      queued.done('held');
      kept.push(queued);
    }
    this.events.splice(0, this.events.length, ...kept);
    this.resize();
  }

  /** The store took `parked` (or refused it for good): the room is told (once) that what it held is being saved. */
  recovered(parked: Queued): void {
    if (!this.failing) return;
    this.failing = false;
    const messages = [parked, ...this.events].filter((queued) => queued.counted && queued.event?.type === 'message');
    this.outage.recovered(this.record, messages.length);
  }
}
