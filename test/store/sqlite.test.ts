import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { EMPTY_STATE, type RoomState } from '../../src/room/state.js';
import { migrate, openStore, readMigrations, type SqliteStore } from '../../src/store/index.js';
import { writeError } from '../../src/store/sqlite/write-errors.js';
import { fillDisk } from '../helpers/full-disk.js';
import { human, message, stateAfter, storeContract } from './contract.js';

storeContract('SQLite', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-store-'));
  return {
    open: async () => openStore(path.join(dir, 'rt.db')),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('SQLite store', () => {
  let dir: string;
  let store: SqliteStore;
  const file = () => path.join(dir, 'rt.db');
  /** A second connection to the file, to see what is stored as it is. */
  const raw = <T>(sql: string, ...params: unknown[]): T => {
    const db = new Database(file(), { readonly: true });
    try {
      return db.prepare(sql).get(...params) as T;
    } finally {
      db.close();
    }
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-sqlite-'));
    store = openStore(file());
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies every migration once, recorded in schema_migrations, in WAL mode', async () => {
    const versions = readMigrations().map((m) => m.version);
    expect(raw<{ list: string }>('SELECT group_concat(version) AS list FROM schema_migrations').list).toBe(
      versions.join(','),
    );
    expect(raw<{ journal_mode: string }>('PRAGMA journal_mode').journal_mode).toBe('wal');
    await store.close();
    store = openStore(file()); // reopening applies nothing new and does not fail
    expect(raw<{ n: number }>('SELECT count(*) AS n FROM schema_migrations').n).toBe(versions.length);
  });

  it('refuses a database newer than the code', async () => {
    await store.close();
    const db = new Database(file());
    db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)").run();
    db.close();
    expect(() => openStore(file())).toThrow(/schema version 999, newer than this code knows/);
    store = openStore(':memory:');
  });

  it('does not rewrite the state snapshot when only seq and lastHuman changed, and derives them on load', async () => {
    const room = await store.rooms.open('test', 'room');
    const a = human(1, 'a', ['a']);
    let state: RoomState = { ...stateAfter(EMPTY_STATE, a), humans: ['alice'] };
    await store.rooms.commit(room.id, [message(a)], state);
    for (let seq = 2; seq <= 5; seq++) {
      const m = human(seq, `m${seq}`, [`m${seq}`]);
      state = stateAfter(state, m);
      await store.rooms.commit(room.id, [message(m)], state);
    }
    const stored = JSON.parse(raw<{ state: string }>('SELECT state FROM channels WHERE id = ?', room.id).state);
    expect([stored.seq, stored.lastHuman]).toEqual([1, 1]);
    expect((await store.rooms.open('test', 'room')).state).toEqual(state);
    // A change beyond them is written, with them.
    state = { ...state, control: { holder: 'humans', count: 0, reason: '/pass' } };
    await store.rooms.commit(room.id, [], state);
    expect(JSON.parse(raw<{ state: string }>('SELECT state FROM channels WHERE id = ?', room.id).state)).toEqual(state);
  });

  it("sets the room's privacy column with the state", async () => {
    const room = await store.rooms.open('test', 'room');
    await store.rooms.commit(room.id, [{ type: 'privacy', mode: 'mentions' }], { ...EMPTY_STATE, privacy: 'mentions' });
    expect(raw<{ privacy: string }>('SELECT privacy FROM channels WHERE id = ?', room.id).privacy).toBe('mentions');
  });

  it('refuses a room whose stored state is not JSON, naming the room and the column', async () => {
    const room = await store.rooms.open('test', 'room');
    await store.close();
    const db = new Database(file());
    db.prepare("UPDATE channels SET state = '{not json' WHERE id = ?").run(room.id);
    db.close();
    store = openStore(file());
    await expect(store.rooms.open('test', 'room')).rejects.toThrow(
      'room test:room: its stored state (channels.state) is not valid JSON',
    );
  });

  it("waits for another connection's write lock instead of failing at once, also when a decision reads first", async () => {
    const room = await store.rooms.open('test', 'room');
    // A long reply's chunks: the commit looks its further ids up before it writes.
    const reply = human(1, 'a long reply', ['r1', 'r2'], { kind: 'agent', author: 'code', authorId: 'b1' });
    // Another process's writer (here a worker thread, so that it can let go while this thread waits on SQLite).
    const holder = new Worker(
      `const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
       const { parentPort } = require('node:worker_threads');
       const db = new Database(${JSON.stringify(file())});
       db.exec('BEGIN IMMEDIATE');
       db.exec("UPDATE channels SET caught_up = 'held' WHERE id = ${room.id}");
       parentPort.postMessage('locked');
       setTimeout(() => { db.exec('COMMIT'); db.close(); }, 400);`,
      { eval: true },
    );
    try {
      await new Promise((resolve, reject) => holder.once('message', resolve).once('error', reject));
      const started = performance.now();
      await expect(store.rooms.commit(room.id, [message(reply)], stateAfter(EMPTY_STATE, reply))).resolves.toBe('done');
      expect(performance.now() - started).toBeGreaterThan(200);
      expect(await store.rooms.seen(room.id, 'r2')).toBe(true);
      expect(await store.rooms.caughtUp('test', 'room')).toBe('held');
    } finally {
      await holder.terminate();
    }
  });

  it('reports a write a full disk refuses as a StoreError worth another try, and takes it once there is space', async () => {
    const room = await store.rooms.open('test', 'room');
    const disk = fillDisk(store.db);
    const said = human(1, 'during the outage', ['d1']);
    const failed = await store.rooms.commit(room.id, [message(said)], stateAfter(EMPTY_STATE, said)).catch((e) => e);
    expect(failed).toBeInstanceOf(StoreError);
    expect(failed).toMatchObject({ retryable: true, message: 'database or disk is full' });
    disk.free();
    await expect(store.rooms.commit(room.id, [message(said)], stateAfter(EMPTY_STATE, said))).resolves.toBe('done');
    expect(await store.rooms.seen(room.id, 'd1')).toBe(true);
  });

  it("reports a new room's row a read-only database refuses as a StoreError worth another try", async () => {
    store.db.pragma('query_only = ON');
    await expect(store.rooms.open('test', 'room')).rejects.toMatchObject({
      retryable: true,
      message: 'attempt to write a readonly database',
    });
    store.db.pragma('query_only = OFF');
    expect((await store.rooms.open('test', 'room')).key).toBe('test:room');
  });

  it('reports a write SQLite would refuse again (a broken constraint) as a StoreError not worth another try', () => {
    expect(
      writeError(Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })),
    ).toMatchObject({ retryable: false });
    expect(writeError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toMatchObject({
      retryable: true,
    });
    expect(writeError(new TypeError('a bug'))).toMatchObject({ retryable: false });
  });

  describe('an upgrade from the journal schema (006)', () => {
    /** A database as the previous version left it: two rooms, their turn state, a request and work in flight. */
    function legacyDatabase(): void {
      const db = new Database(file());
      db.pragma('foreign_keys = ON');
      migrate(
        db,
        readMigrations().filter((m) => m.version <= 6),
      );
      db.exec(`
        INSERT INTO channels (platform, channel, direct_agent, created_at, consecutive, control, control_reason, privacy)
          VALUES ('discord', 'c1', NULL, 0, 3, 'humans', 'turn limit', 'mentions'),
                 ('discord', 'dm', 'code', 0, 0, 'agents', NULL, NULL);
        INSERT INTO messages (channel_id, platform_message_id, author, author_id, kind, content, mentions, created_at)
          VALUES (1, 'a', 'Ann', 'u1', 'human', 'hi @code', '["code"]', 1),
                 (1, 'b', 'code', 'b1', 'agent', 'hello', '[]', 2),
                 (1, 'c', 'bob', 'u2', 'human', 'hey', '[]', 3),
                 (2, 'd', 'zed', 'u3', 'human', 'dm', '[]', 4),
                 (1, 'e', 'ANN', 'u1', 'human', 'again', '[]', 5),
                 (1, 'f', 'code', 'b1', 'agent', 'long', '[]', 6);
        INSERT INTO message_refs (channel_id, platform_message_id, message_id) VALUES (1, 'f2', 6);
        INSERT INTO threads (requester, origin_room, target_room, request, awaited, answers, status, opened_at, deadline, opener)
          VALUES ('code', 'discord:c1', 'discord:c1', 'what?', '[{"name":"data","kind":"agent"}]',
            '[{"participant":"data","text":"","passed":true,"at":3}]', 'closed', 1, 9, '{"people":["Ann"],"audience":null}'),
                 ('code', 'discord:c1', 'discord:c1', 'and?', '[{"name":"data","kind":"agent"},{"name":"rev","kind":"agent"}]',
            '[{"participant":"data","text":"yes","passed":false,"at":4},{"participant":"rev","text":"down","passed":false,"failed":true,"at":5}]',
            'answered', 2, 10, NULL);
        INSERT INTO work (room, kind, key, created_at) VALUES ('discord:c1', 'turn', 'round:1/code', 0);
        INSERT INTO tool_runs (work_id, tool, args, status, started_at) VALUES (1, 'bash', '{}', 'ok', 0);
        INSERT INTO outbox (channel_id, purpose, text, created_at) VALUES (1, 'reply', 'unsent', 0);
      `);
      db.close();
    }

    it("keeps each room's control, count, privacy, humans and sequence, and its messages and ids", async () => {
      await store.close();
      rmSync(file(), { force: true });
      legacyDatabase();
      store = openStore(file());
      const c1 = await store.rooms.open('discord', 'c1');
      expect(c1.state).toEqual({
        ...EMPTY_STATE,
        seq: 5,
        lastHuman: 4,
        control: { holder: 'humans', count: 3, reason: 'turn limit' },
        privacy: 'mentions',
        humans: ['ANN', 'bob'],
      });
      expect((await store.rooms.open('discord', 'dm')).state).toEqual({
        ...EMPTY_STATE,
        seq: 1,
        lastHuman: 1,
        humans: ['zed'],
      });
      expect((await store.rooms.history(c1.id, 10)).map((m) => m.content)).toEqual([
        'hi @code',
        'hello',
        'hey',
        'again',
        'long',
      ]);
      expect(await store.rooms.seen(c1.id, 'f2')).toBe(true);
      const echo = human(6, 'hi @code', ['a']);
      expect(await store.rooms.commit(c1.id, [message(echo)], stateAfter(c1.state ?? EMPTY_STATE, echo))).toBe(
        'duplicate',
      );
      const next = human(6, 'new', ['g']);
      expect(await store.rooms.commit(c1.id, [message(next)], stateAfter(c1.state ?? EMPTY_STATE, next))).toBe('done');
    });

    it('converts requests to answers with outcomes, cancels those still in flight, and drops the old journal', async () => {
      await store.close();
      rmSync(file(), { force: true });
      legacyDatabase();
      store = openStore(file());
      expect(await store.rooms.requests('discord:c1')).toEqual([
        {
          id: 1,
          requester: 'code',
          origin: 'discord:c1',
          target: 'discord:c1',
          parent: null,
          text: 'what?',
          awaited: [{ name: 'data', kind: 'agent' }],
          answers: [{ participant: 'data', text: '', outcome: 'pass', at: 3 }],
          status: 'closed',
          openedAt: 1,
          deadline: 9,
          opener: { people: ['Ann'], audience: null },
        },
        expect.objectContaining({
          id: 2,
          answers: [
            { participant: 'data', text: 'yes', outcome: 'answer', at: 4 },
            { participant: 'rev', text: 'down', outcome: 'failed', at: 5 },
          ],
          status: 'cancelled',
          opener: { people: [], audience: null },
        }),
      ]);
      expect(await store.rooms.maxRequestId()).toBe(2);
      const tables = raw<{ names: string }>(
        "SELECT group_concat(name) AS names FROM sqlite_master WHERE type = 'table' AND name IN ('work', 'outbox', 'threads')",
      );
      expect(tables.names).toBeNull();
      expect(await store.tools.runs('discord:c1', 1)).toEqual([]);
    });
  });
  describe('an upgrade to knowledge and actions by place (007 to 008)', () => {
    it('keeps the knowledge kept before, shown nowhere since its place is unknown, and starts the actions log empty', async () => {
      await store.close();
      rmSync(file(), { force: true });
      const db = new Database(file());
      migrate(
        db,
        readMigrations().filter((m) => m.version <= 7),
      );
      db.exec(`
        INSERT INTO knowledge (agent, key, value, updated_at) VALUES ('code', 'pin', 'from somewhere', 1);
        INSERT INTO agent_actions (agent, room, action, at) VALUES ('code', 'discord:dm', 'bash: echo secret', 2);
      `);
      db.close();
      store = openStore(file());
      const general = { room: 'discord:general', audience: null };
      expect(await store.knowledge.list('code', general)).toEqual([]);
      expect(raw<{ room: string; value: string }>("SELECT room, value FROM knowledge WHERE key = 'pin'")).toEqual({
        room: '',
        value: 'from somewhere',
      });
      expect(await store.actions.recent('code', { room: 'discord:dm', audience: null })).toEqual([]);
      await store.knowledge.set('code', general, 'pin', 'here', 3);
      expect(await store.knowledge.list('code', general)).toEqual([{ key: 'pin', value: 'here' }]);
    });
  });
});

describe('recall search with sqlite-vec', () => {
  let dir: string;
  const file = () => path.join(dir, 'rt.db');
  const DIMS = 768;
  /** The query: a dense pattern of signs, as real embeddings are dense. */
  const query = new Float32Array(DIMS).map((_, d) => (Math.sin(d * 3.7) > 0 ? 1 : -1));
  /** Message i: noise leaning toward the query by a share that grows with i % 17 (its own noise breaks ties). */
  const vectorOf = (i: number) =>
    new Float32Array(DIMS).map((_, d) => Math.sin(i * 12.9898 + d * 78.233) + (query[d] ?? 0) * (i % 17) * 0.06);

  async function fill(store: SqliteStore, count: number): Promise<number> {
    const room = await store.rooms.open('test', 'room');
    let state = EMPTY_STATE;
    const msgs = Array.from({ length: count }, (_, i) =>
      human(i + 1, `message ${i}`, [`m${i}`], i % 5 === 0 ? { audience: ['alice', 'code'] } : {}),
    );
    state = stateAfter(state, ...msgs);
    await store.rooms.commit(room.id, msgs.map(message), state);
    const stored = await store.rooms.history(room.id, count);
    await store.embeddings.put(
      stored.map((m, i) => ({ id: m.id, vector: vectorOf(i) })),
      'emb',
    );
    return room.id;
  }

  const top = async (store: SqliteStore, roomId: number, audiences: string[][]) =>
    (await store.embeddings.search({ roomId, model: 'emb', vector: query, audiences, before: 1e9, limit: 5 })).map(
      (f) => f.message.content,
    );

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-vec-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds through the bit index what a scan of every vector finds', async () => {
    const indexed = openStore(file());
    expect(indexed.embeddings.index).toBeDefined();
    const roomId = await fill(indexed, 400);
    const scanned = openStore(file(), { vectorIndex: false });
    try {
      for (const audiences of [[], [['alice', 'code']]]) {
        const expected = await top(scanned, roomId, audiences);
        expect(expected).toHaveLength(5);
        expect(await top(indexed, roomId, audiences)).toEqual(expected);
      }
      // The private messages (every fifth) only for their audience.
      expect((await top(indexed, roomId, [])).every((c) => Number(c.split(' ')[1]) % 5 !== 0)).toBe(true);
    } finally {
      await scanned.close();
      await indexed.close();
    }
  });

  it('rebuilds the index from the stored vectors after a run without sqlite-vec', async () => {
    const first = openStore(file());
    const roomId = await fill(first, 50);
    await first.close();
    const without = openStore(file(), { vectorIndex: false });
    const more = await without.rooms.open('test', 'room');
    const late = human(60, 'written without the index', ['late']);
    await without.rooms.commit(more.id, [message(late)], stateAfter(EMPTY_STATE, late));
    const [stored] = await without.rooms.history(more.id, 1);
    await without.embeddings.put([{ id: stored?.id ?? -1, vector: query }], 'emb');
    await without.close();
    const again = openStore(file());
    try {
      const candidates = again.embeddings.index?.candidates({ roomId, vector: query, audiences: [''], before: 1e9 });
      expect(candidates?.[0]).toBe(stored?.id);
      expect((await top(again, roomId, []))[0]).toBe('written without the index');
    } finally {
      await again.close();
    }
  });

  it('falls back to scanning every vector, with one log line, where the extension cannot load', async () => {
    const { VectorIndex } = await import('../../src/store/sqlite/vector-index.js');
    const lines: string[] = [];
    const log = { warn: (_: unknown, line: string) => lines.push(line) } as unknown as Logger;
    const db = {
      loadExtension: () => {
        throw new Error('cannot open shared object file');
      },
    } as unknown as Database.Database;
    expect(VectorIndex.open(db, log)).toBeUndefined();
    expect(lines).toEqual(['sqlite-vec could not be loaded: recall scans every vector of a room instead']);
  });
});
