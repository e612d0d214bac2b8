/**
 * With bridges sharing the store (replicas): taking up what no live bridge serves. Every third of a lease, this
 * bridge takes the rooms whose lease ended unreleased with work left (their bridge died, was cut off, or stopped in
 * the middle of a turn) and resumes them from the store, takes the events other bridges kept for the rooms it
 * serves or nobody does (Slack gives each event to one bridge only; a room's bridge may die before storing one), and
 * the notes other rooms' decisions wrote for them (a request settled in a room another bridge serves) and the
 * operator commands other bridges claimed for them (carried out here, answered there), and spends whole the spending
 * holds of bridges that died (not seen within a lease). A note is taken in the decision that removes its stored
 * copy, so one that also reached its room as it was written is taken once.
 */
import type { Logger } from '../../log.js';
import type { Inbound } from '../../ports.js';
import type { InboxPort, LeasePort, NoteRecord, RoomRecord, RoomStore, StorePort } from '../../store/port.js';
import type { Received } from '../inbound/reception.js';
import { hasWork, resume } from '../loop/resume.js';
import type { RoomActor } from '../loop/room-actor.js';

export interface HandoverDeps {
  readonly leases: LeasePort;
  readonly inbox: InboxPort;
  readonly rooms: Pick<RoomStore, 'all'>;
  /** REPLICA_ID. */
  readonly replica: string;
  readonly ttlMs: number;
  /** Takes a room's lease and makes its actor; undefined when another bridge got there first. */
  readonly adopt: (record: RoomRecord) => Promise<RoomActor | undefined>;
  /** Resumes a room taken up (its restart, then its catch-up done). */
  readonly resume: (actor: RoomActor, record: RoomRecord) => Promise<void>;
  /** Takes a kept event as if just received; 'elsewhere' when another bridge serves its room after all. */
  readonly receive: (event: Inbound) => Promise<Received>;
  /**
   * Tells a room its catch-up is done (`platform:channel`): the kept events another bridge's catch-up read are all
   * in, so the asks they made run (a missed message holds the room's asks until then, and this bridge's own catch-up
   * of the room is long done).
   */
  readonly caughtUp: (room: string) => Promise<unknown>;
  /** Spends whole the spending holds of replicas that died (their calls will never be settled). */
  readonly abandoned?: (() => Promise<void>) | undefined;
  /** Takes the operator commands other bridges left for the rooms this one serves, and carries them out. */
  readonly commands: () => Promise<void>;
  /** Sends a stored note to its room (taking the room when nobody serves it). */
  readonly note: (note: NoteRecord) => void;
  readonly log: Logger;
}

/** The handover of a bridge serving its rooms under leases; none without them (one bridge owns every room). */
export function handoverFor(
  store: Pick<StorePort, 'leases' | 'inbox' | 'rooms' | 'tools'>,
  lease: { readonly replica: string } | undefined,
  deps: Pick<HandoverDeps, 'ttlMs' | 'adopt' | 'receive' | 'caughtUp' | 'abandoned' | 'note' | 'commands' | 'log'>,
): Handover | undefined {
  if (!lease || !store.leases || !store.inbox) return undefined;
  return new Handover({
    ...deps,
    leases: store.leases,
    inbox: store.inbox,
    rooms: store.rooms,
    replica: lease.replica,
    resume: async (actor, record) => {
      await resume(actor, record, store.tools);
      void actor.deliver({ type: 'catch-up', phase: 'done' });
    },
  });
}

export class Handover {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A signal came during a round: another look follows it. */
  private again = false;

  constructor(private readonly deps: HandoverDeps) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), Math.max(100, Math.floor(this.deps.ttlMs / 3)));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round (one at a time): rooms left with work, kept events, notes and commands, then the holds of replicas that died. */
  tick(): Promise<void> {
    return this.go(true);
  }

  /**
   * Another bridge kept something for a room (a signal): the kept events, notes and commands are looked at now,
   * rather than at the next round (rooms left with work wait for that).
   */
  soon(): void {
    if (!this.timer) return;
    if (this.running) this.again = true;
    else void this.go(false);
  }

  private go(full: boolean): Promise<void> {
    this.running ??= (full ? this.round() : this.kept())
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'taking up rooms from other bridges failed'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.soon();
        }
      });
    return this.running;
  }

  private async round(): Promise<void> {
    const { leases, replica, ttlMs } = this.deps;
    const lapsed = new Set(await leases.lapsed());
    if (lapsed.size > 0) {
      for (const record of await this.deps.rooms.all()) {
        if (!lapsed.has(record.id)) continue;
        if (!hasWork(record.state)) {
          // Nothing to take up: released, so it is not looked at again.
          if (await leases.acquire(record.id, replica, ttlMs)) await leases.release(replica, [record.id]);
          continue;
        }
        const actor = await this.deps.adopt(record);
        if (!actor) continue;
        this.deps.log.info({ room: record.key, replica }, 'taking up a room another bridge left with work');
        await this.deps.resume(actor, record);
      }
    }
    await this.kept();
    await this.deps.abandoned?.();
  }

  /** Events, notes and commands other bridges kept for the rooms this one serves, or nobody does. */
  private async kept(): Promise<void> {
    const { inbox, replica } = this.deps;
    const taken: number[] = [];
    /** Rooms given events another bridge's catch-up read: told their catch-up is done once those are in. */
    const missed = new Set<string>();
    for (const kept of await inbox.list(replica)) {
      let event: Inbound;
      try {
        event = JSON.parse(kept.event) as Inbound;
      } catch (error) {
        this.deps.log.error({ err: error, id: kept.id }, 'a kept event is not JSON; dropped');
        taken.push(kept.id);
        continue;
      }
      const received = await this.deps.receive(event);
      if (received === 'elsewhere') continue;
      if (event.missed) missed.add(`${event.platform}:${event.channel}`);
      // Held in memory (the store cannot write) or not kept: it stays in the store, taken again at the next look (a
      // copy already stored is then a duplicate), so a stop or a crash meanwhile loses nothing.
      if (received === 'kept') taken.push(kept.id);
    }
    for (const room of missed) {
      await this.deps
        .caughtUp(room)
        .catch((error: unknown) =>
          this.deps.log.warn({ err: error, room }, 'a room could not be told the catch-up kept for it is in'),
        );
    }
    await inbox.done(taken);
    for (const note of await inbox.notes(replica)) this.deps.note(note);
    await this.deps.commands();
  }
}
