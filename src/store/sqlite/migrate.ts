import type Database from 'better-sqlite3';
import { type Migration, pendingMigrations, readMigrations } from '../migrations.js';

/** Applies pending migrations, each in its own transaction; refuses a database newer than the code. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = readMigrations()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version),
  );
  const done: number[] = [];
  for (const migration of pendingMigrations(migrations, applied)) {
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
