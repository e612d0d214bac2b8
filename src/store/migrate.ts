import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { RoundtableError } from '../errors.js';
import { packagePath } from '../paths.js';

export const MIGRATIONS_DIR = packagePath('migrations');

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** `NNN_name.sql` files, in version order. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .map((file) => /^(\d+)_([\w-]+)\.sql$/.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({
      version: Number(match[1]),
      name: match[2] ?? '',
      sql: readFileSync(path.join(dir, match[0]), 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
}

/** Applies pending migrations, each in its own transaction; refuses a database newer than the code. */
export function migrate(db: Database.Database, migrations = readMigrations()): number[] {
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
