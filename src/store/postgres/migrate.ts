import type pg from 'pg';
import { type Migration, POSTGRES_MIGRATIONS_DIR, pendingMigrations, readMigrations } from '../migrations.js';
import { borrow, NO_READ_TIMEOUT } from './pool.js';

/**
 * The advisory lock migrations are applied under, so that bridges starting together on one database take turns: the
 * first applies what is pending, the others then find nothing left to do. (An arbitrary constant: "RoundTbl".)
 */
export const MIGRATION_LOCK = 0x526f756e6454626cn;

/** Postgres's migrations (the baseline, then the twins of SQLite's later ones). */
export const postgresMigrations = (): Migration[] => readMigrations(POSTGRES_MIGRATIONS_DIR);

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version bigint PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`;

/** The versions a database has applied; none when it has no schema_migrations table yet. */
export async function appliedVersions(client: Pick<pg.ClientBase, 'query'>): Promise<Set<number>> {
  const table = await client.query<{ found: string | null }>("SELECT to_regclass('schema_migrations')::text AS found");
  if (!table.rows[0]?.found) return new Set();
  const applied = await client.query<{ version: string }>('SELECT version::text AS version FROM schema_migrations');
  return new Set(applied.rows.map((row) => Number(row.version)));
}

/**
 * Applies pending migrations under the advisory lock, each in its own transaction; refuses a database newer than the
 * code. Resolves with the versions applied.
 */
export async function migratePostgres(
  pool: pg.Pool,
  migrations: readonly Migration[] = postgresMigrations(),
): Promise<number[]> {
  const lock = MIGRATION_LOCK.toString();
  const { client, release } = await borrow(pool);
  let broken: Error | undefined;
  // Waiting for another bridge's migrations, and a migration of a large table, may take long: no statement timeout.
  // (pg reads a statement's own `query_timeout`; its types do not name it.)
  const long = (text: string, values: unknown[] = []) =>
    client.query({ text, values, query_timeout: NO_READ_TIMEOUT } as pg.QueryConfig);
  try {
    await client.query('SET statement_timeout = 0');
    await long('SELECT pg_advisory_lock($1)', [lock]);
    await client.query(CREATE_TABLE);
    const done: number[] = [];
    for (const migration of pendingMigrations(migrations, await appliedVersions(client))) {
      await client.query('BEGIN');
      await long(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        Date.now(),
      ]);
      await client.query('COMMIT');
      done.push(migration.version);
    }
    await client.query('SELECT pg_advisory_unlock($1)', [lock]);
    // Back to the pool's statement timeout (given at the connection's start).
    await client.query('RESET statement_timeout');
    return done;
  } catch (error) {
    // The lock and an open transaction belong to the session: closing the connection (rather than pooling it) rolls
    // back a migration that failed half-way and releases the lock, whatever state the connection was left in.
    broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    release(broken);
  }
}
