/**
 * A Postgres server that stops answering without closing anything (a partition that drops packets) or a statement
 * that runs on and on: the store's statement fails within the pool's timeouts instead of waiting for good, and the
 * pool goes on once the network does. A throw-away cluster for this file; outside CI, without Postgres, one line and
 * skipped.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { MIGRATION_LOCK, migratePostgres } from '../../src/store/postgres/migrate.js';
import { createPool } from '../../src/store/postgres/pool.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';

const suite = migratedPostgres();

describe.runIf(suite.plan.run)('Postgres that stops answering', () => {
  it('has a connect timeout, a statement timeout, a read timeout and TCP keep-alive by default', () => {
    const pool = createPool('postgres://postgres@127.0.0.1:1/none');
    const options = pool.options as typeof pool.options & { statement_timeout?: number; query_timeout?: number };
    expect(options.connectionTimeoutMillis).toBeGreaterThan(0);
    expect(options.statement_timeout).toBeGreaterThan(0);
    expect(options.query_timeout).toBeGreaterThan(options.statement_timeout ?? 0);
    expect(options.keepAlive).toBe(true);
    expect(options.keepAliveInitialDelayMillis).toBeGreaterThan(0);
    void pool.end();
  });

  it('fails a statement whose answer never comes, and a connection that never opens, then goes on', async () => {
    const cluster = suite.cluster();
    const { name } = await cluster.createDatabase({ from: suite.migrated() });
    const proxy = await startFaultProxy({ host: '127.0.0.1', port: cluster.port });
    const errors: Error[] = [];
    const pool = createPool(`postgres://postgres@127.0.0.1:${proxy.port}/${name}`, {
      onError: (error) => errors.push(error),
      timeouts: { connectMs: 1_000, statementMs: 1_000, readMs: 2_000 },
    });
    try {
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      proxy.stall();
      // On the pooled connection: no answer comes.
      let at = Date.now();
      await expect(pool.query('SELECT 2 AS two')).rejects.toThrow(/timeout/i);
      expect(Date.now() - at).toBeLessThan(15_000);
      // On a new connection: its start-up is never answered.
      at = Date.now();
      await expect(pool.query('SELECT 3 AS three')).rejects.toThrow(/timeout/i);
      expect(Date.now() - at).toBeLessThan(15_000);
      proxy.flow();
      expect((await pool.query('SELECT 4 AS four')).rows).toEqual([{ four: 4 }]);
    } finally {
      await pool.end();
      await proxy.close();
      await cluster.dropDatabase(name);
    }
  }, 60_000);

  it('cancels a statement that runs past the statement timeout, and the connection serves the next', async () => {
    const cluster = suite.cluster();
    const { name, url } = await cluster.createDatabase({ from: suite.migrated() });
    const pool = createPool(url, { max: 1, timeouts: { statementMs: 500 } });
    try {
      await expect(pool.query('SELECT pg_sleep(20)')).rejects.toThrow(/statement timeout/);
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
      await cluster.dropDatabase(name);
    }
  }, 60_000);

  it("waits for another bridge's migrations past the timeouts, and the connection has its statement timeout again", async () => {
    const cluster = suite.cluster();
    const { name, url } = await cluster.createDatabase({ from: suite.migrated() });
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    const pool = createPool(url, { max: 1, timeouts: { statementMs: 300, readMs: 600 } });
    try {
      await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
      const migrated = migratePostgres(pool);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]);
      expect(await migrated).toEqual([]);
      await expect(pool.query('SELECT pg_sleep(5)')).rejects.toThrow(/statement timeout/);
    } finally {
      await other.end();
      await pool.end();
      await cluster.dropDatabase(name);
    }
  }, 60_000);
});
