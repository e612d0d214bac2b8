/**
 * The room actors, one per `platform:channel`, made on first use from the room's stored state. Notes between rooms
 * go through here.
 */

import type { Config } from '../../config/index.js';
import { RoundtableError } from '../../errors.js';
import type { ChatAdapter } from '../../ports.js';
import { EMPTY_STATE } from '../../room/state.js';
import type { NoteRecord, RoomRecord, RoomStore, ToolJournal } from '../../store/port.js';
import type { LeaseKeeper } from '../replicas/leases.js';
import { hasWork, resume } from './resume.js';
import { type ActorDeps, RoomActor, type Taken } from './room-actor.js';
import type { RoomInput } from './room-handle.js';
import { roomSetup } from './room-setup.js';

/** The room is served by another bridge sharing the store (it holds the room's lease). */
export class RoomElsewhere extends RoundtableError {
  constructor(readonly key: string) {
    super('lease', `room ${key} is served by another bridge`);
  }
}

export class Rooms {
  private readonly actors = new Map<string, Promise<RoomActor>>();
  private made: RoomActor[] = [];
  /** What carries out the rooms' decisions (given once the executors are made, before any room is). */
  private effects: ActorDeps['effects'] = () => {
    throw new Error('the rooms were used before their effects were given');
  };

  constructor(
    private readonly deps: {
      readonly store: RoomStore;
      readonly adapters: ReadonlyMap<string, ChatAdapter>;
      /** The agents and settings a room's fixed facts (its setup) come from. */
      readonly config: Config;
      readonly actor: Omit<ActorDeps, 'notes' | 'lease' | 'effects'>;
      /** With bridges sharing the store (replicas): a room is served only while this bridge holds its lease. */
      readonly lease?: LeaseKeeper | undefined;
      /** The tool runs of turns, for a room taken up with its turn in flight. */
      readonly journal?: ToolJournal | undefined;
    },
  ) {
    deps.lease?.onLost((roomId) => this.drop(roomId));
  }

  /** What carries out each room's decisions: the executors (they reach the rooms back, so they are made after). */
  carryOut(effects: ActorDeps['effects']): void {
    this.effects = effects;
  }

  /** The room, made (and its state loaded) on first use. Throws when its platform is not connected. */
  get(platform: string, channel: string, directAgent?: string): Promise<RoomActor> {
    const key = `${platform}:${channel}`;
    let actor = this.actors.get(key);
    if (!actor) {
      const adapter = this.deps.adapters.get(platform);
      if (!adapter) return Promise.reject(new Error(`no adapter for platform "${platform}"`));
      if (adapter.ownsChannel && !adapter.ownsChannel(channel)) return Promise.reject(new RoomElsewhere(key));
      actor = this.deps.store.open(platform, channel, directAgent).then(async (record) => {
        if (this.deps.lease && !(await this.deps.lease.take(record.id))) throw new RoomElsewhere(key);
        const made = this.make(record, adapter);
        // A room this bridge gave up (its lease lapsed in an outage) and holds again: the work its stored state holds
        // — a turn in flight, posts not sent, asks waiting — is taken up, as after a restart, before the new event.
        if (hasWork(record.state) && this.deps.journal) {
          await resume(made, record, this.deps.journal);
          void made.deliver({ type: 'catch-up', phase: 'done' });
        }
        return made;
      });
      this.actors.set(key, actor);
      actor.catch(() => this.actors.delete(key));
    }
    return actor;
  }

  /**
   * A room by its stored row, made to have its work taken up (after a restart, or from a bridge that left it);
   * undefined when its platform is not here, another bridge serves it, or it is made here already — on a message for
   * it since the row was read, which took its work up then (taken up twice, its turn would be answered twice).
   */
  async adopt(record: RoomRecord): Promise<RoomActor | undefined> {
    const adapter = this.deps.adapters.get(record.platform);
    if (!adapter || (adapter.ownsChannel && !adapter.ownsChannel(record.channel))) return undefined;
    if (this.actors.has(record.key)) return undefined;
    if (this.deps.lease && !(await this.deps.lease.take(record.id))) return undefined;
    if (this.actors.has(record.key)) return undefined;
    const actor = this.make(record, adapter);
    this.actors.set(record.key, Promise.resolve(actor));
    return actor;
  }

  /** Stops serving a room whose lease this bridge lost: it is forgotten here, and made again (from the store) on its next event. */
  private drop(roomId: number): void {
    const actor = this.made.find((made) => made.record.id === roomId);
    if (!actor) return;
    this.made = this.made.filter((made) => made !== actor);
    this.actors.delete(actor.key);
    actor.stop();
  }

  /** The room with this key (`platform:channel`), if its platform is connected. */
  async byKey(key: string): Promise<RoomActor | undefined> {
    const at = key.indexOf(':');
    if (at < 0 || !this.deps.adapters.has(key.slice(0, at))) return undefined;
    return this.get(key.slice(0, at), key.slice(at + 1));
  }

  /** Sends an event to a room by key; 'stopped' when the room's platform is not connected. */
  async send(key: string, event: RoomInput, options: Parameters<RoomActor['deliver']>[1] = {}): Promise<Taken> {
    let actor: RoomActor | undefined;
    try {
      actor = await this.byKey(key);
    } catch (error) {
      if (error instanceof RoomElsewhere) return 'stopped'; // its bridge takes its notes
      throw error;
    }
    return actor ? actor.deliver(event, options) : 'stopped';
  }

  /** Tells the room its catch-up is done; true once it has taken that (false: not served here). */
  async caughtUp(key: string): Promise<boolean> {
    return (await this.send(key, { type: 'catch-up', phase: 'done' })) === 'done';
  }

  /** Resolves true once the room (served here) has taken every event that reached it before (see RoomActor.taken). */
  async taken(key: string): Promise<boolean> {
    try {
      const actor = await this.byKey(key);
      return actor ? actor.taken() : false;
    } catch (error) {
      if (error instanceof RoomElsewhere) return false; // its bridge keeps its marks
      throw error;
    }
  }

  /**
   * A note for a room: taken there, and its stored copy removed in the same decision (a note taken already makes that
   * decision a duplicate). One for a room another bridge serves stays in the store for that bridge.
   */
  note(record: NoteRecord): void {
    this.send(record.room, { type: 'note', note: record.note, id: record.id }, { urgent: true }).catch(
      (error: unknown) =>
        this.deps.actor.log.warn(
          { err: error, room: record.room, note: record.id },
          'a note was not taken; it stays stored',
        ),
    );
  }

  /** Whether this bridge serves the room now: it is made here and, with leases, its lease is surely held. */
  serves(key: string): boolean {
    const actor = this.made.find((made) => made.key === key);
    if (!actor) return false;
    return !this.deps.lease || this.deps.lease.fence(actor.record.id) !== undefined;
  }

  /** The rooms made so far. */
  all(): readonly RoomActor[] {
    return this.made;
  }

  /** Resolves when no room has work left. */
  async idle(): Promise<void> {
    for (;;) {
      const busy = this.made.filter((actor) => actor.busy);
      if (busy.length === 0) return;
      await Promise.all(busy.map((actor) => actor.idle()));
    }
  }

  private make(record: RoomRecord, adapter: ChatAdapter): RoomActor {
    const actor = new RoomActor(record, roomSetup(this.deps.config, record), record.state ?? EMPTY_STATE, adapter, {
      ...this.deps.actor,
      effects: this.effects,
      lease: this.deps.lease,
      notes: (note) => this.note(note),
    });
    this.made.push(actor);
    return actor;
  }
}
