/**
 * The room actors (src/bridge/loop/rooms.ts): a room is made once, and its stored work is taken up once — a handover
 * that read the rooms left with work before this bridge made the room (on a message for it) does not take it up again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Rooms } from '../../src/bridge/loop/rooms.js';
import { StoreOutage } from '../../src/bridge/loop/store-outage.js';
import { silentLogger } from '../../src/log.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { testConfig } from '../helpers/config.js';
import { MemoryAdapter } from '../helpers/memory-adapter.js';

describe('the rooms', () => {
  let dir: string | undefined;
  let store: SqliteStore | undefined;
  afterEach(() => {
    store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('does not adopt a room it serves already: the room made since the handover looked took its work up itself', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-rooms-'));
    const opened = openStore(path.join(dir, 'rt.db'));
    store = opened;
    const log = silentLogger();
    let id = 1;
    const rooms = new Rooms({
      store: opened.rooms,
      adapters: new Map([['test', new MemoryAdapter()]]),
      config: testConfig({ agents: [{ name: 'data' }] }),
      actor: {
        store: opened.rooms,
        ids: { next: () => id++, took: () => undefined },
        outage: new StoreOutage({ max: 10, backoff: () => 10, notice: async () => undefined, clock: Date.now, log }),
        clock: Date.now,
        log,
      },
      journal: opened.tools,
    });
    rooms.carryOut(() => undefined);
    const made = await rooms.get('test', 'room0');
    const [record] = await opened.rooms.all();
    if (!record) throw new Error('room0 is stored');
    expect(record.key).toBe(made.key);
    expect(await rooms.adopt(record)).toBeUndefined();
  });
});
