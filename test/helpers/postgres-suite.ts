/**
 * A test file's throw-away Postgres: the cluster is started once before the file's tests (when Postgres is there,
 * or required with CI), one database is migrated once as a template to copy per test, and the cluster is stopped
 * after them. Outside CI without Postgres, `plan.run` is false and the note says so once.
 */
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { type PostgresCluster, type PostgresPlan, postgresPlan, startCluster } from './postgres.js';

export interface MigratedPostgres {
  readonly plan: PostgresPlan;
  /** The running cluster (from the file's beforeAll on). */
  cluster(): PostgresCluster;
  /** The name of the migrated template database. */
  migrated(): string;
}

export function migratedPostgres(): MigratedPostgres {
  const plan = postgresPlan();
  if (plan.note) console.warn(plan.note);
  let cluster: PostgresCluster | undefined;
  let migrated: string | undefined;
  if (plan.run) {
    beforeAll(async () => {
      if (plan.problem) throw new Error(plan.problem);
      cluster = await startCluster({ ...(plan.bin ? { bin: plan.bin } : {}) });
      const template = await cluster.createDatabase();
      await (await openPostgresStore(template.url)).close();
      migrated = template.name;
    }, 180_000);
    afterAll(async () => cluster?.stop());
  }
  return {
    plan,
    cluster: () => {
      if (!cluster) throw new Error('the Postgres cluster is not started');
      return cluster;
    },
    migrated: () => {
      if (migrated === undefined) throw new Error('the Postgres template database is not migrated');
      return migrated;
    },
  };
}
