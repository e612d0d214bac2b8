import type Database from 'better-sqlite3';
import { RoundtableError } from '../../errors.js';
import { type Migration, readMigrations } from '../migrations.js';

/** Applies pending migrations, each in its own transaction; refuses a database newer than the code. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = readMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version),
  );
  const newest = migrations.at(-1)?.version ?? 0;
  const newestApplied = Math.max(0, ...applied);
  if (newestApplied > newest) {
    throw new RoundtableError(
      'store',
      `the database is at schema version ${newestApplied}, newer than this code knows (${newest}); upgrade Roundtable`,
    );
  }
  const done: number[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.name,
        Date.now(),
      );
    })();
    done.push(migration.version);
  }
  return done;
}
