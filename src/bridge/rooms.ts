/**
 * The room actors, one per `platform:channel`, made on first use from the room's stored state. Notes between rooms
 * go through here.
 */
import type { ChatAdapter } from '../ports.js';
import { EMPTY_STATE, type RoomSetup } from '../room/state.js';
import type { NoteRecord, RoomRecord, RoomStore } from '../store/port.js';
import { type ActorDeps, type Incoming, RoomActor, type Taken } from './room-actor.js';

export class Rooms {
  private readonly actors = new Map<string, Promise<RoomActor>>();
  private readonly made: RoomActor[] = [];

  constructor(
    private readonly deps: {
      readonly store: RoomStore;
      readonly adapters: ReadonlyMap<string, ChatAdapter>;
      /** The room's fixed facts (configuration) for its row. */
      readonly setup: (record: RoomRecord) => RoomSetup;
      readonly actor: Omit<ActorDeps, 'notes' | 'others'>;
    },
  ) {}

  /** The room, made (and its state loaded) on first use. Throws when its platform is not connected. */
  get(platform: string, channel: string, directAgent?: string): Promise<RoomActor> {
    const key = `${platform}:${channel}`;
    let actor = this.actors.get(key);
    if (!actor) {
      const adapter = this.deps.adapters.get(platform);
      if (!adapter) return Promise.reject(new Error(`no adapter for platform "${platform}"`));
      actor = this.deps.store.open(platform, channel, directAgent).then((record) => this.make(record, adapter));
      this.actors.set(key, actor);
      actor.catch(() => this.actors.delete(key));
    }
    return actor;
  }

  /** A room by its stored row (after a restart). */
  adopt(record: RoomRecord): Promise<RoomActor> | undefined {
    const adapter = this.deps.adapters.get(record.platform);
    if (!adapter) return undefined;
    let actor = this.actors.get(record.key);
    if (!actor) {
      actor = Promise.resolve(this.make(record, adapter));
      this.actors.set(record.key, actor);
    }
    return actor;
  }

  /** The room with this key (`platform:channel`), if its platform is connected. */
  async byKey(key: string): Promise<RoomActor | undefined> {
    const at = key.indexOf(':');
    if (at < 0 || !this.deps.adapters.has(key.slice(0, at))) return undefined;
    return this.get(key.slice(0, at), key.slice(at + 1));
  }

  /** Sends an event to a room by key; 'stopped' when the room's platform is not connected. */
  async send(key: string, event: Incoming, options: Parameters<RoomActor['deliver']>[1] = {}): Promise<Taken> {
    const actor = await this.byKey(key);
    return actor ? actor.deliver(event, options) : 'stopped';
  }

  /** A note for a room: taken there, and its stored copy removed in the same decision. */
  note(record: NoteRecord): void {
    void this.send(
      record.room,
      { type: 'note', note: record.note },
      { urgent: true, extra: [{ type: 'note-done', id: record.id }] },
    );
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
    const actor = new RoomActor(record, this.deps.setup(record), record.state ?? EMPTY_STATE, adapter, {
      ...this.deps.actor,
      notes: (note) => this.note(note),
      others: { get: (...args) => this.get(...args), byKey: (key) => this.byKey(key) },
    });
    this.made.push(actor);
    return actor;
  }
}
