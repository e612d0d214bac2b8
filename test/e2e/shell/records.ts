/**
 * What a real bridge leaves behind that the generated conversations compare: each decision the store takes (which
 * turn a room started, every request row written) and what the log says (hand-backs, errors).
 */
import pino from 'pino';
import type { Logger } from '../../../src/log.js';
import type { RoomState, Turn } from '../../../src/room/state.js';
import type { RoomStore, StorePort } from '../../../src/store/port.js';
import type { Observed } from '../../model/script.js';

/**
 * The store as the bridge uses it, with every commit seen on its way: a room's turn as it started (the ask the
 * decision made current) and the request rows, in the order they were written.
 */
export class StoreTap {
  readonly store: StorePort;
  /** Commits finished so far (a number that moves while the bridge is at work). */
  commits = 0;
  /** Commits under way. */
  inFlight = 0;
  /** Request rows written since the last `take`. */
  private requests: Observed[] = [];
  private readonly keys = new Map<number, string>();
  private readonly current = new Map<number, number | undefined>();
  private readonly started = new Map<string, Turn>();
  /** Rooms whose catch-up mark was stored, with the mark. */
  readonly marks = new Map<string, string>();

  constructor(private readonly inner: StorePort) {
    const rooms = inner.rooms;
    const tap: Partial<RoomStore> = {
      open: async (platform, channel, directAgent) => {
        const record = await rooms.open(platform, channel, directAgent);
        this.keys.set(record.id, record.key);
        return record;
      },
      all: async () => {
        const records = await rooms.all();
        for (const record of records) this.keys.set(record.id, record.key);
        return records;
      },
      commit: async (roomId, writes, state) => {
        this.inFlight += 1;
        try {
          const result = await rooms.commit(roomId, writes, state);
          if (result === 'done') this.took(roomId, writes, state);
          return result;
        } finally {
          this.inFlight -= 1;
          this.commits += 1;
        }
      },
      setCaughtUp: async (platform, channel, id) => {
        await rooms.setCaughtUp(platform, channel, id);
        this.marks.set(`${platform}:${channel}`, id);
      },
    };
    const wrapped = new Proxy(rooms, {
      get: (target, name: keyof RoomStore) => {
        const own = tap[name];
        if (own) return own;
        const value = target[name];
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    this.store = new Proxy(inner, {
      get: (target, name: keyof StorePort) => (name === 'rooms' ? wrapped : target[name]),
    });
  }

  /** The turn a room started last (as its decision made it current). */
  startedIn(room: string): Turn | undefined {
    return this.started.get(room);
  }

  /** The request rows written since the last call. */
  takeRequests(): Observed[] {
    const taken = this.requests;
    this.requests = [];
    return taken;
  }

  /** Every room's state as last committed, by room key. */
  async states(): Promise<Map<string, RoomState>> {
    const states = new Map<string, RoomState>();
    for (const record of await this.inner.rooms.all()) if (record.state) states.set(record.key, record.state);
    return states;
  }

  private took(roomId: number, writes: Parameters<RoomStore['commit']>[1], state: RoomState): void {
    const key = this.keys.get(roomId) ?? `#${roomId}`;
    const ask = state.current?.ask;
    if (ask && this.current.get(roomId) !== ask.id) this.started.set(key, ask);
    this.current.set(roomId, ask?.id);
    for (const write of writes) {
      if (write.type !== 'request') continue;
      this.requests.push({
        kind: 'request',
        id: write.request.id,
        status: write.request.status,
        answers: write.request.answers.map((a) => ({ participant: a.participant, outcome: a.outcome, text: a.text })),
      });
    }
  }
}

/** A logger that keeps the bridge's hand-backs, its warnings and its errors (info and above). */
export class LogTap {
  readonly logger: Logger;
  private handBacks: Array<{ room: string; reason: string }> = [];
  /** Warning and error lines, newest last (shown when a conversation fails). */
  readonly errors: string[] = [];

  constructor() {
    this.logger = pino(
      { level: 'info' },
      {
        write: (line: string) => {
          const entry = JSON.parse(line) as { msg?: string; room?: string; reason?: string; level?: number };
          if (entry.msg === 'control handed back to the humans') {
            this.handBacks.push({ room: entry.room ?? '?', reason: entry.reason ?? '?' });
          } else if ((entry.level ?? 0) >= 40) {
            this.errors.push(line.trim());
            if (this.errors.length > 20) this.errors.shift();
          }
        },
      },
    );
  }

  /** The hand-backs logged since the last call. */
  takeHandBacks(): Array<{ room: string; reason: string }> {
    const taken = this.handBacks;
    this.handBacks = [];
    return taken;
  }
}
