import type { Logger } from '../log.js';
import type { ChatAdapter } from '../ports.js';
import type { PrivacyMode } from '../room/privacy.js';
import type { Store } from '../store/index.js';
import { ChannelActor } from './channel-actor.js';
import { RoomState } from './room-state.js';

/** A room as the shell tracks it: its persistent state, its serial actor, its adapter. */
export interface Room {
  readonly key: string;
  readonly state: RoomState;
  readonly actor: ChannelActor;
  readonly adapter: ChatAdapter;
  /** Posts under way in this room, until their platform ids are stored (echoes wait for them). */
  readonly posting: Set<Promise<unknown>>;
}

/** Messages kept in memory per room: the context window, and enough for the pair guard. */
const MIN_WINDOW = 64;

/** The room actors: one Room (state + serial queue) per `platform:channel`, made on first use. */
export class Rooms {
  private readonly rooms = new Map<string, Room>();
  private readonly windowSize: number;

  constructor(
    private readonly deps: {
      readonly store: Store;
      readonly adapters: ReadonlyMap<string, ChatAdapter>;
      readonly historyLimit: number;
      /** The configured privacy of a room key (PRIVACY, PRIVACY_ROOMS). */
      readonly privacy: (key: string) => PrivacyMode;
      readonly log: Logger;
    },
  ) {
    this.windowSize = Math.max(deps.historyLimit + 1, MIN_WINDOW);
  }

  get(platform: string, channel: string, directAgent?: string): Room {
    const key = `${platform}:${channel}`;
    let room = this.rooms.get(key);
    if (!room) {
      const adapter = this.deps.adapters.get(platform);
      if (!adapter) throw new Error(`no adapter for platform "${platform}"`);
      const row = this.deps.store.channel(platform, channel, directAgent);
      const state = new RoomState(this.deps.store, row, this.windowSize, this.deps.privacy(key));
      const actor = new ChannelActor((error) => this.deps.log.error({ err: error, room: key }, 'room task failed'));
      room = { key, state, actor, adapter, posting: new Set() };
      this.rooms.set(key, room);
    }
    return room;
  }

  /** The room with this key (`platform:channel`), if its platform is connected. */
  byKey(key: string): Room | undefined {
    const at = key.indexOf(':');
    if (at < 0 || !this.deps.adapters.has(key.slice(0, at))) return undefined;
    return this.get(key.slice(0, at), key.slice(at + 1));
  }

  all(): Room[] {
    return [...this.rooms.values()];
  }

  /** Resolves when every room has nothing queued or running. */
  async idle(): Promise<void> {
    for (;;) {
      const busy = this.all().filter((room) => room.actor.busy);
      if (busy.length === 0) return;
      await Promise.all(busy.map((room) => room.actor.idle()));
    }
  }
}
