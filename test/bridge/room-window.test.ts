import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RoomWindows } from '../../src/bridge/loop/room-window.js';
import { renderingCount } from '../../src/llm/context.js';
import { silentLogger } from '../../src/log.js';
import type { Write } from '../../src/room/effects.js';
import { EMPTY_STATE } from '../../src/room/state.js';
import type { RoomMessage } from '../../src/room/types.js';
import { openStore, type RoomStore, type SqliteStore } from '../../src/store/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { human, message, stateAfter } from '../store/contract.js';

const SIZE = 5;
const encodings = ['o200k_base', 'cl100k_base'] as const;

/** The store, with a count of the history reads and token writes that reach it. */
function counting(store: RoomStore): { rooms: RoomStore; reads: () => number; kept: () => number } {
  let reads = 0;
  let kept = 0;
  const rooms = Object.create(store) as RoomStore;
  rooms.history = (roomId, limit) => {
    reads += 1;
    return store.history(roomId, limit);
  };
  rooms.keepTokens = (counts) => {
    kept += counts.length;
    return store.keepTokens(counts);
  };
  return { rooms, reads: () => reads, kept: () => kept };
}

/** What the window must hold: the store's newest messages, each counted in both encodings. */
async function expected(store: RoomStore, roomId: number, limit = SIZE): Promise<RoomMessage[]> {
  return (await store.history(roomId, limit)).map((m) => ({
    ...m,
    tokens: { o200k_base: renderingCount(m, 'o200k_base'), cl100k_base: renderingCount(m, 'cl100k_base') },
  }));
}

describe("a room's window in memory", () => {
  let dir: string;
  let store: SqliteStore;
  let seq = 0;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-window-'));
    store = openStore(path.join(dir, 'rt.db'));
    seq = 0;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const said = (text: string, patch: Parameters<typeof human>[3] = {}) => {
    seq += 1;
    return message(human(seq, text, [`p${seq}`], patch));
  };
  const commit = (rooms: RoomStore, roomId: number, writes: Write[], fence?: { token: number }) =>
    rooms.commit(roomId, writes, stateAfter(EMPTY_STATE), fence);

  it('is read from the store once, then extended with what each decision stored', async () => {
    const room = await store.rooms.open('test', 'a');
    for (let i = 0; i < 3; i++) await commit(store.rooms, room.id, [said(`before ${i}`)]);
    const spy = counting(store.rooms);
    const rooms = new RoomWindows({ store: spy.rooms, size: SIZE, encodings, log: silentLogger() }).store();
    expect(await rooms.history(room.id, SIZE)).toEqual(await expected(store.rooms, room.id));
    const runs = [{ tool: 'bash', input: 'ls', output: 'a.csv' }];
    const reply = human(seq + 1, 'ran it', [`p${seq + 1}`, `p${seq + 2}`], {
      kind: 'agent',
      author: 'code',
      toolRuns: runs,
      files: ['[file: out.txt (text/plain, 3 B)]'],
      audience: ['alice', 'code'],
    });
    seq += 2;
    await commit(rooms, room.id, [said('@code look', { mentions: ['code'], requests: ['code'] }), message(reply)]);
    // An edit is a message of its own (`<id>:edit:…`).
    await commit(rooms, room.id, [message(human(seq + 1, 'edited', ['p1:edit:1']))]);
    seq += 1;
    for (let i = 0; i < 4; i++) await commit(rooms, room.id, [said(`after ${i}`)]);
    expect(await rooms.history(room.id, SIZE)).toEqual(await expected(store.rooms, room.id));
    expect(await rooms.history(room.id, 2)).toEqual(await expected(store.rooms, room.id, 2));
    expect(spy.reads()).toBe(1);
    // A duplicate stores nothing, and adds nothing.
    expect(await commit(rooms, room.id, [said('again')])).toBe('done');
    expect(await rooms.commit(room.id, [message(human(99, 'dup', ['p2']))], EMPTY_STATE)).toBe('duplicate');
    expect(await rooms.history(room.id, SIZE)).toEqual(await expected(store.rooms, room.id));
    expect(spy.reads()).toBe(1);
  });

  it('counts each message once and keeps the counts in the store, so a restart counts nothing again', async () => {
    const room = await store.rooms.open('test', 'b');
    const spy = counting(store.rooms);
    const rooms = new RoomWindows({ store: spy.rooms, size: SIZE, encodings, log: silentLogger() }).store();
    for (let i = 0; i < 3; i++) await commit(rooms, room.id, [said(`m${i}`)]);
    await rooms.history(room.id, SIZE);
    await commit(rooms, room.id, [said('m3')]);
    await rooms.history(room.id, SIZE);
    await rooms.history(room.id, SIZE);
    await vi.waitFor(() => expect(spy.kept()).toBe(4), { timeout: 20_000 });
    // A restart: the window is read again, with the counts the store kept.
    const restarted = counting(store.rooms);
    const again = new RoomWindows({ store: restarted.rooms, size: SIZE, encodings, log: silentLogger() }).store();
    expect(await again.history(room.id, SIZE)).toEqual(await expected(store.rooms, room.id));
    expect(restarted.kept()).toBe(0);
    expect((await store.rooms.history(room.id, SIZE)).every((m) => m.tokens?.cl100k_base !== undefined)).toBe(true);
  });

  it('is empty after /reset, and holds only what came after', async () => {
    const room = await store.rooms.open('test', 'c');
    const rooms = new RoomWindows({ store: store.rooms, size: SIZE, encodings, log: silentLogger() }).store();
    for (let i = 0; i < 3; i++) await commit(rooms, room.id, [said(`old ${i}`)]);
    expect(await rooms.history(room.id, SIZE)).toHaveLength(3);
    await rooms.clear(room.id);
    expect(await rooms.history(room.id, SIZE)).toEqual([]);
    await commit(rooms, room.id, [said('new')]);
    expect((await rooms.history(room.id, SIZE)).map((m) => m.content)).toEqual(['new']);
  });

  it('is read again when the room changes hands: a lost lease, another fencing token', async () => {
    const room = await store.rooms.open('test', 'd');
    const spy = counting(store.rooms);
    const windows = new RoomWindows({ store: spy.rooms, size: SIZE, encodings, log: silentLogger() });
    const rooms = windows.store();
    await commit(rooms, room.id, [said('mine')], { token: 1 });
    expect(await rooms.history(room.id, SIZE)).toHaveLength(1);
    // The lease is lost; another bridge serves the room and stores messages.
    windows.drop(room.id);
    await commit(store.rooms, room.id, [said('theirs')]);
    expect((await rooms.history(room.id, SIZE)).map((m) => m.content)).toEqual(['mine', 'theirs']);
    expect(spy.reads()).toBe(2);
    // Taken again without a loss seen here (a paused bridge): the new token's first commit makes it read again.
    await commit(store.rooms, room.id, [said('theirs too')]);
    await commit(rooms, room.id, [said('mine again')], { token: 3 });
    expect((await rooms.history(room.id, SIZE)).map((m) => m.content)).toEqual([
      'mine',
      'theirs',
      'theirs too',
      'mine again',
    ]);
    expect(spy.reads()).toBe(3);
  });

  it('is read again after a commit that failed (what was stored is not known)', async () => {
    const room = await store.rooms.open('test', 'e');
    const failing = Object.create(store.rooms) as RoomStore;
    let fail = false;
    failing.commit = async (...args) => {
      const result = await store.rooms.commit(...args);
      if (fail) throw new Error('connection lost after COMMIT');
      return result;
    };
    const rooms = new RoomWindows({ store: failing, size: SIZE, encodings, log: silentLogger() }).store();
    await commit(rooms, room.id, [said('one')]);
    expect(await rooms.history(room.id, SIZE)).toHaveLength(1);
    fail = true;
    await expect(commit(rooms, room.id, [said('two')])).rejects.toThrow('connection lost');
    expect((await rooms.history(room.id, SIZE)).map((m) => m.content)).toEqual(['one', 'two']);
  });

  it('keeps the windows of the rooms read most recently, within its bound', async () => {
    const spy = counting(store.rooms);
    const rooms = new RoomWindows({ store: spy.rooms, size: SIZE, rooms: 2, encodings, log: silentLogger() }).store();
    const [a, b, c] = [
      await store.rooms.open('test', 'g1'),
      await store.rooms.open('test', 'g2'),
      await store.rooms.open('test', 'g3'),
    ];
    for (const room of [a, b, c]) await commit(rooms, room.id, [said(`in ${room.channel}`)]);
    await rooms.history(a.id, SIZE);
    await rooms.history(b.id, SIZE);
    await rooms.history(a.id, SIZE);
    expect(spy.reads()).toBe(2);
    await rooms.history(c.id, SIZE); // b goes: read least recently
    await rooms.history(a.id, SIZE);
    expect(spy.reads()).toBe(3);
    expect((await rooms.history(b.id, SIZE)).map((m) => m.content)).toEqual(['in g2']);
    expect(spy.reads()).toBe(4);
  });

  it('takes in what was committed while it was being read', async () => {
    const room = await store.rooms.open('test', 'f');
    await commit(store.rooms, room.id, [said('first')]);
    const slow = Object.create(store.rooms) as RoomStore;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    slow.history = async (roomId, limit) => {
      await gate;
      return store.rooms.history(roomId, limit);
    };
    const rooms = new RoomWindows({ store: slow, size: SIZE, encodings, log: silentLogger() }).store();
    const reading = rooms.history(room.id, SIZE);
    await commit(rooms, room.id, [said('during')]);
    release();
    await reading;
    await commit(rooms, room.id, [said('after')]);
    expect((await rooms.history(room.id, SIZE)).map((m) => m.content)).toEqual(['first', 'during', 'after']);
  });
});

describe("a bridge's turns", () => {
  let h: Harness | undefined;
  afterEach(async () => h?.close());

  it('read the room from the store once, and still see every message since', async () => {
    h = await startHarness({ agents: [{ name: 'alice', activation: 'always' }] });
    const rooms = h.store.rooms;
    const read = rooms.history.bind(rooms);
    let reads = 0;
    rooms.history = (roomId, limit) => {
      reads += 1;
      return read(roomId, limit);
    };
    let n = 0;
    h.llm.respond(() => ({ content: `answer ${++n}` }));
    for (const text of ['first question', 'second question', 'third question']) {
      await h.adapter.say(text);
      await h.bridge.idle();
    }
    expect(h.llm.requests).toHaveLength(3);
    const last = JSON.stringify(h.llm.requests.at(-1)?.messages);
    for (const seen of ['first question', 'answer 1', 'second question', 'answer 2', 'third question']) {
      expect(last).toContain(seen);
    }
    expect(reads).toBe(1);
  });
});
