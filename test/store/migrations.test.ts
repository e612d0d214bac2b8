import { describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS_DIR, pendingMigrations, readMigrations } from '../../src/store/index.js';

describe('migrations of both dialects', () => {
  it('gives every SQLite migration from the Postgres baseline on a Postgres twin of the same number and name', () => {
    const sqlite = readMigrations();
    const postgres = readMigrations(POSTGRES_MIGRATIONS_DIR);
    const baseline = postgres[0]?.version ?? Number.POSITIVE_INFINITY;
    const named = (list: typeof sqlite) => list.map((m) => `${String(m.version).padStart(3, '0')}_${m.name}.sql`);
    expect(named(postgres)).toEqual(named(sqlite.filter((m) => m.version >= baseline)));
  });

  it('applies what a database lacks, in order, and refuses one newer than the code', () => {
    const migrations = readMigrations();
    const versions = migrations.map((m) => m.version);
    expect(pendingMigrations(migrations, new Set()).map((m) => m.version)).toEqual(versions);
    expect(pendingMigrations(migrations, new Set(versions.slice(0, -1))).map((m) => m.version)).toEqual(
      versions.slice(-1),
    );
    expect(() => pendingMigrations(migrations, new Set([...versions, 999]))).toThrow(
      /schema version 999, newer than this code knows/,
    );
  });
});
