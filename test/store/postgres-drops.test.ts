/**
 * A Postgres connection ended while the store holds it (in a transaction, during a migration's lock): the statement
 * under way fails, the process goes on (an unhandled 'error' on the connection would end it, and vitest would report
 * it), the pool's listener is told, and the next transaction runs on a new connection. A throw-away cluster for this
 * file; outside CI, without Postgres, one line and skipped.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPool, transaction } from '../../src/store/postgres/pool.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';
import { until } from '../helpers/until.js';

const suite = migratedPostgres();

/** Ends the backends of `database` running a statement that contains `marker`; resolves with how many. */
async function terminate(url: string, database: string, marker: string): Promise<number> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = $1 AND pid <> pg_backend_pid() AND query LIKE $2`,
      [database, `%${marker}%`],
    );
    return rows.length;
  } finally {
    await admin.end();
  }
}

describe.runIf(suite.plan.run)('a Postgres connection ended while the store holds it', () => {
  it('fails the transaction, tells the pool listener, and the next transaction runs on a new connection', async () => {
    const { name, url } = await suite.cluster().createDatabase({ from: suite.migrated() });
    const errors: Error[] = [];
    const pool = createPool(url, { onError: (error) => errors.push(error) });
    try {
      const held = transaction(pool, async (tx) => {
        await tx.query({ text: "SELECT pg_sleep(30), 'held-in-transaction'" });
      });
      const failed = held.then(
        () => undefined,
        (error: unknown) => error,
      );
      const ended: number[] = [];
      await until(async () => {
        ended.push(await terminate(url, name, 'held-in-transaction'));
        return ended.at(-1) !== 0;
      });
      expect(ended.at(-1)).toBe(1);
      expect(String(await failed)).toMatch(/terminat/);
      await until(() => errors.length > 0);
      expect(errors[0]?.message).toMatch(/terminat/);
      // The ended connection is not handed out again: the next transaction works.
      expect(await transaction(pool, async (tx) => (await tx.query({ text: 'SELECT 1 AS one' })).rows)).toEqual([
        { one: 1 },
      ]);
    } finally {
      await pool.end();
      await suite.cluster().dropDatabase(name);
    }
  }, 60_000);
});
