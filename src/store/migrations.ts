import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RoundtableError } from '../errors.js';
import { packagePath } from '../paths.js';

/** SQLite's migrations: `migrations/NNN_name.sql`. */
export const MIGRATIONS_DIR = packagePath('migrations');
/**
 * Postgres's: `migrations/postgres/NNN_name.sql`. The first is a baseline (the whole schema as of its version: a fresh
 * Postgres database has no older layout to upgrade); each later one is the twin of the SQLite migration of its number.
 */
export const POSTGRES_MIGRATIONS_DIR = packagePath('migrations', 'postgres');

export interface Migration {
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

/** The migrations not applied yet, in order; refuses a database newer than the code. */
export function pendingMigrations(migrations: readonly Migration[], applied: ReadonlySet<number>): Migration[] {
  const newest = migrations.at(-1)?.version ?? 0;
  const newestApplied = Math.max(0, ...applied);
  if (newestApplied > newest) {
    throw new RoundtableError(
      'store',
      `the database is at schema version ${newestApplied}, newer than this code knows (${newest}); upgrade Roundtable`,
    );
  }
  return migrations.filter((migration) => !applied.has(migration.version));
}
