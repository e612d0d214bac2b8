import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { packagePath } from '../paths.js';

export const MIGRATIONS_DIR = packagePath('migrations');

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
