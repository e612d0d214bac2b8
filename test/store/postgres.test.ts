/**
 * The store on Postgres: the store contract (the same suite SQLite passes), the migrations and their advisory lock,
 * the schema beside SQLite's, and `--check`'s lines. A throw-away cluster per file (test/helpers/postgres.ts); outside
 * CI, without Postgres installed, this file says so in one line and is skipped.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { main, run } from '../../src/main.js';
import { EMPTY_STATE, type RoomState } from '../../src/room/state.js';
import { openStore } from '../../src/store/index.js';
import { checkPostgres } from '../../src/store/postgres/check.js';
import { migratePostgres, postgresMigrations } from '../../src/store/postgres/migrate.js';
import { createPool } from '../../src/store/postgres/pool.js';
import { openPostgresStore, PostgresStore } from '../../src/store/postgres/store.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { startFakeOpenAI } from '../fakes/openai-server/index.js';
import type { TestDatabaseUrl } from '../helpers/postgres.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';
import { human, message, stateAfter, storeContract } from './contract.js';
import { postgresSchema, sqliteSchema } from './schema.js';

/** A database pg.migrated() once is copied for each test of the contract (migrations have tests of their own below). */
const pg = migratedPostgres();
const plan = pg.plan;

/** A fresh database for one test, dropped after it. */
function freshDatabase() {
  let database: TestDatabaseUrl;
  beforeEach(async () => {
    database = await pg.cluster().createDatabase();
  });
  afterEach(async () => pg.cluster().dropDatabase(database.name));
  return () => database;
}

describe.runIf(plan.run)('Postgres', () => {
  storeContract('Postgres', async () => {
    const database = await pg.cluster().createDatabase({ from: pg.migrated() });
    return {
      open: async () => openPostgresStore(database.url),
      drop: async () => pg.cluster().dropDatabase(database.name),
    };
  });

  describe('Postgres store', () => {
    const database = freshDatabase();
    let store: PostgresStore | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });
    const open = async () => {
      store = await openPostgresStore(database().url);
      return store;
    };
    const one = async <R>(text: string, values: unknown[] = []) =>
      (await (store ?? (await open())).pool.query(text, values)).rows[0] as R;

    it('applies its migrations once, recorded in schema_migrations', async () => {
      const s = await open();
      const versions = postgresMigrations().map((m) => m.version);
      expect(versions[0]).toBe(7);
      const applied = await s.pool.query('SELECT version FROM schema_migrations ORDER BY version');
      expect(applied.rows.map((r) => r.version)).toEqual(versions);
      await s.close();
      // Reopening applies nothing new and does not fail.
      const again = await open();
      expect((await one<{ n: number }>('SELECT count(*) AS n FROM schema_migrations')).n).toBe(versions.length);
      expect(await migratePostgres(again.pool)).toEqual([]);
    });

    it('applies each migration once when several bridges start together on an empty database', async () => {
      const pools = Array.from({ length: 4 }, () => createPool(database().url, { max: 1 }));
      try {
        const applied = await Promise.all(pools.map((pool) => migratePostgres(pool)));
        expect(applied.flat().sort((x, y) => x - y)).toEqual(postgresMigrations().map((m) => m.version));
      } finally {
        await Promise.all(pools.map((pool) => pool.end()));
      }
      const s = await open();
      expect(await s.rooms.all()).toEqual([]);
    });

    it('refuses a database newer than the code, in one line naming DATABASE_URL', async () => {
      const s = await open();
      await s.pool.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)");
      await s.close();
      store = undefined;
      await expect(openPostgresStore(database().url)).rejects.toThrow(
        /^DATABASE_URL: postgres:\/\/\[redacted\]@127\.0\.0\.1:\d+\/\w+ cannot be used: the database is at schema version 999, newer than this code knows \(20\); upgrade Roundtable$/,
      );
    });

    it('says in one line that a database cannot be reached, its password redacted', async () => {
      const url = pg.cluster().url('nowhere', 'rt:s3cret-password').replace(`:${pg.cluster().port}/`, ':1/');
      const error = await openPostgresStore(url).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(
        /^DATABASE_URL: postgres:\/\/\[redacted\]@127\.0\.0\.1:1\/nowhere cannot be used: /,
      );
      expect(error?.message).toContain('ECONNREFUSED');
      expect(error?.message).not.toContain('s3cret');
      expect(error?.message.split('\n')).toHaveLength(1);
    });

    it('has the tables, columns, keys and indexes SQLite has', async () => {
      const s = await open();
      const sqlite = openStore(':memory:');
      try {
        const expected = sqliteSchema(sqlite.db);
        const actual = await postgresSchema(s.pool);
        // SQLite orders notes by its implicit row id; Postgres has none, so the table declares it.
        const notes = actual.notes;
        expect(notes?.columns).toContain('rowid integer not null');
        if (notes) actual.notes = { ...notes, columns: notes.columns.filter((c) => !c.startsWith('rowid ')) };
        expect(actual).toEqual(expected);
      } finally {
        await sqlite.close();
      }
    });

    it('does not rewrite the state snapshot when only seq and lastHuman changed, and derives them on load', async () => {
      const s = await open();
      const room = await s.rooms.open('test', 'room');
      const a = human(1, 'a', ['a']);
      let state: RoomState = { ...stateAfter(EMPTY_STATE, a), humans: ['alice'] };
      await s.rooms.commit(room.id, [message(a)], state);
      for (let seq = 2; seq <= 5; seq++) {
        const m = human(seq, `m${seq}`, [`m${seq}`]);
        state = stateAfter(state, m);
        await s.rooms.commit(room.id, [message(m)], state);
      }
      const stored = async () =>
        JSON.parse((await one<{ state: string }>('SELECT state FROM channels WHERE id = $1', [room.id])).state);
      expect([(await stored()).seq, (await stored()).lastHuman]).toEqual([1, 1]);
      expect((await s.rooms.open('test', 'room')).state).toEqual(state);
      state = { ...state, control: { holder: 'humans', count: 0, reason: '/pass' } };
      await s.rooms.commit(room.id, [], state);
      expect(await stored()).toEqual(state);
    });

    it("sets the room's privacy column with the state", async () => {
      const s = await open();
      const room = await s.rooms.open('test', 'room');
      await s.rooms.commit(room.id, [{ type: 'privacy', mode: 'mentions' }], { ...EMPTY_STATE, privacy: 'mentions' });
      expect((await one<{ privacy: string }>('SELECT privacy FROM channels WHERE id = $1', [room.id])).privacy).toBe(
        'mentions',
      );
    });

    it('refuses a room whose stored state is not JSON, naming the room and the column', async () => {
      const s = await open();
      const room = await s.rooms.open('test', 'room');
      await s.pool.query("UPDATE channels SET state = '{not json' WHERE id = $1", [room.id]);
      await s.close();
      const again = await open();
      await expect(again.rooms.open('test', 'room')).rejects.toThrow(
        'room test:room: its stored state (channels.state) is not valid JSON',
      );
    });

    it('fails its ping when the database takes no writes', async () => {
      const s = await open();
      await expect(s.ping()).resolves.toBeUndefined();
      await s.pool.query(`ALTER DATABASE ${database().name} SET default_transaction_read_only = on`);
      // New connections see the setting.
      const readOnly = new PostgresStore(createPool(database().url));
      try {
        await expect(readOnly.ping()).rejects.toThrow(/read-only transaction/);
      } finally {
        await readOnly.close();
      }
    });

    it('rejects a decision it cannot store now with a retryable StoreError, and stores it when tried again', async () => {
      await (await open()).close();
      // New connections wait at most 100 ms for a lock, then fail with 55P03 (lock not available).
      const admin = createPool(database().url);
      await admin.query(`ALTER DATABASE ${database().name} SET lock_timeout = '100ms'`);
      const s = await open();
      const room = await s.rooms.open('test', 'room');
      const a = human(1, 'a', ['x']);
      const holder = await admin.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE messages IN ACCESS EXCLUSIVE MODE');
        const failed = await s.rooms.commit(room.id, [message(a)], stateAfter(EMPTY_STATE, a)).catch((e) => e);
        expect(failed).toBeInstanceOf(StoreError);
        expect(failed).toMatchObject({ retryable: true, message: expect.stringMatching(/lock timeout/) });
        await holder.query('ROLLBACK');
      } finally {
        holder.release();
        await admin.end();
      }
      expect(await s.rooms.commit(room.id, [message(a)], stateAfter(EMPTY_STATE, a))).toBe('done');
      // A write it would refuse again (a room it does not have) is not worth another try.
      const refused = await s.rooms.commit(999, [message(human(2, 'b', ['x']))], EMPTY_STATE).catch((e) => e);
      expect(refused).toBeInstanceOf(StoreError);
      expect(refused).toMatchObject({ retryable: false });
    });

    it('keeps numbers as numbers: ids, times and sums beyond 32 bits', async () => {
      const s = await open();
      const room = await s.rooms.open('test', 'room');
      const late = human(1, 'late', ['x'], { at: 4_102_444_800_000 });
      await s.rooms.commit(room.id, [message(late)], stateAfter(EMPTY_STATE, late));
      expect((await s.rooms.history(room.id, 1))[0]?.at).toBe(4_102_444_800_000);
      await s.usage.add('ana', 'test:room', { input: 3_000_000_000, cached: 0, output: 1 });
      await s.usage.add('ana', 'test:other', { input: 3_000_000_000, cached: 0, output: 1 });
      expect(await s.usage.total()).toEqual([{ agent: 'ana', calls: 2, input: 6_000_000_000, cached: 0, output: 2 }]);
    });
  });

  describe('--check with DATABASE_URL', () => {
    const database = freshDatabase();
    const lines = async (url: string, options: Parameters<typeof checkPostgres>[1] = {}) =>
      (await checkPostgres(url, options)).map((r) => `${r.ok ? '✓' : '✗'} ${r.item}: ${r.detail}`);

    it('says the database answers, its schema is empty or up to date, and its clock agrees', async () => {
      const url = database().url;
      expect(await lines(url)).toEqual([
        expect.stringMatching(/^✓ database: postgres:\/\/\[redacted\]@127\.0\.0\.1:\d+\/\w+ answers \(PostgreSQL \d+/),
        '✓ database schema: empty: start creates the schema (version 20)',
        expect.stringMatching(/^✓ database clock: within \d+\.\d s of this machine's$/),
      ]);
      // --check creates nothing.
      expect((await lines(url))[1]).toBe('✓ database schema: empty: start creates the schema (version 20)');
      await (await openPostgresStore(url)).close();
      expect((await lines(url))[1]).toBe('✓ database schema: at version 20, up to date');
    });

    it('fails a database newer than the code, and a clock more than 5 s off', async () => {
      const url = database().url;
      const s = await openPostgresStore(url);
      await s.pool.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)");
      await s.close();
      const hourAhead = () => Date.now() + 3_600_000;
      expect((await lines(url, { clock: hourAhead })).slice(1)).toEqual([
        '✗ database schema: the database is at schema version 999, newer than this code knows (20); upgrade Roundtable',
        expect.stringMatching(
          /^✗ database clock: 3\d{3}\.\d s behind this machine's \(at most 5 s\): keep both clocks in sync \(NTP\)$/,
        ),
      ]);
    });

    it('fails an unreachable database in one line, its password redacted', async () => {
      const url = pg.cluster().url('x', 'rt:s3cret-password').replace(`:${pg.cluster().port}/`, ':1/');
      const found = await lines(url, { timeoutMs: 5000 });
      expect(found).toEqual([
        expect.stringMatching(
          /^✗ database: DATABASE_URL: postgres:\/\/\[redacted\]@127\.0\.0\.1:1\/x cannot be used: .*ECONNREFUSED/,
        ),
      ]);
      expect(found.join('\n')).not.toContain('s3cret');
    });
  });

  describe('the bridge with DATABASE_URL', () => {
    const database = freshDatabase();
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'rt-pg-bridge-'));
      mkdirSync(path.join(dir, 'agents'));
      writeFileSync(
        path.join(dir, 'agents', 'data.md'),
        '---\nname: data\nmodel: m\nactivation: always\n---\nYou are data.\n',
      );
      return () => rmSync(dir, { recursive: true, force: true });
    });

    /** The terminal room, its input piped; resolves with what it printed once it ended. */
    async function room(lines: string[], env: Record<string, string>): Promise<string> {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      let printed = '';
      stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
      });
      const running = await run({ argv: [], cwd: dir, env, stdin, stdout, sandbox: async () => new FakeSandbox() });
      stdin.end(`${lines.join('\n')}\n`);
      await running.console?.finished;
      await running.shutdown();
      return printed;
    }

    it('keeps the room in Postgres, not in DATA_DIR, and finds it there after a restart', async () => {
      const llm = await startFakeOpenAI();
      llm.respond(() => ({ content: 'hello from data' }));
      try {
        const env = { DATABASE_URL: database().url, OPENAI_BASE_URL: llm.baseURL, LOG_LEVEL: 'silent' };
        expect(await room(['hi @data'], env)).toContain('[@data]: hello from data');
        expect(existsSync(path.join(dir, 'data', 'roundtable.db'))).toBe(false);
        const store = await openPostgresStore(database().url);
        try {
          const [console] = await store.rooms.all();
          // Its own room (each replica's terminal is), named by the host without REPLICA_ID.
          expect(console?.key).toBe(`console:main@${hostname()}`);
          const messages = await store.rooms.history(console?.id ?? 0, 10);
          expect(messages.map((m) => `${m.author}: ${m.content}`)).toEqual(['user: hi @data', 'data: hello from data']);
        } finally {
          await store.close();
        }
        expect(await room(['thanks'], env)).toContain('2 messages of history loaded for this room.');
      } finally {
        await llm.close();
      }
    });

    it('stops in one line when the database cannot be reached, its password redacted', async () => {
      const url = pg.cluster().url('x', 'rt:s3cret-password').replace(`:${pg.cluster().port}/`, ':1/');
      const stderr: string[] = [];
      const write = process.stderr.write;
      process.stderr.write = ((chunk: string) => stderr.push(String(chunk)) > 0) as typeof process.stderr.write;
      let code: number;
      try {
        code = await main({
          argv: ['--console'],
          cwd: dir,
          env: { DATABASE_URL: url, LOG_LEVEL: 'silent' },
          stdin: new PassThrough(),
        });
      } finally {
        process.stderr.write = write;
      }
      expect(code).toBe(1);
      expect(stderr.join('')).toMatch(
        /^DATABASE_URL: postgres:\/\/\[redacted\]@127\.0\.0\.1:1\/x cannot be used: .*ECONNREFUSED.*\n$/,
      );
      expect(stderr.join('')).not.toContain('s3cret');
    });

    it('checks the database in --check, after the data folder', async () => {
      const stdout = new PassThrough();
      let printed = '';
      stdout.on('data', (chunk: Buffer) => {
        printed += chunk.toString();
      });
      await main({
        argv: ['--check'],
        cwd: dir,
        env: { DATABASE_URL: database().url, OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', LOG_LEVEL: 'silent' },
        stdout,
      });
      const lines = printed.split('\n');
      const at = lines.findIndex((line) => line.startsWith('✓ data folder:'));
      expect(lines.slice(at + 1, at + 4)).toEqual([
        expect.stringMatching(/^✓ database: postgres:\/\/\[redacted\]@127\.0\.0\.1:\d+\/\w+ answers/),
        '✓ database schema: empty: start creates the schema (version 20)',
        expect.stringMatching(/^✓ database clock: within/),
      ]);
    });
  });
});
