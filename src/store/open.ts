/**
 * Which store the bridge uses: Postgres when DATABASE_URL is set, else SQLite in DATA_DIR. The Postgres modules (and
 * the pg driver) are loaded only then, so the embedded store starts as fast as ever.
 */
import path from 'node:path';
import type { Logger } from '../log.js';
import type { CheckResult } from '../self-check.js';
import type { StorePort } from './port.js';
import { openStore } from './sqlite/store.js';

/** The SQLite file in a data folder. */
export const SQLITE_FILE = 'roundtable.db';

export interface StoreChoice {
  readonly DATABASE_URL?: string | undefined;
}

export interface OpenOptions {
  /** The data folder (resolved): SQLite's file lives there. */
  readonly dataDir: string;
  /** When notes are written (ms since the epoch). */
  readonly clock?: (() => number) | undefined;
  /** A Postgres connection's error, idle or held (reported, never thrown; the pool opens another). */
  readonly onError?: ((error: Error) => void) | undefined;
  /**
   * Where a store problem that does not stop it is told (SQLite: sqlite-vec not loading; Postgres: its connections
   * dropping and coming back, one line each per outage).
   */
  readonly log?: Logger | undefined;
}

/** Opens (creating and migrating when needed) the store the settings choose. */
export async function openStoreFrom(settings: StoreChoice, options: OpenOptions): Promise<StorePort> {
  if (!settings.DATABASE_URL)
    return openStore(path.join(options.dataDir, SQLITE_FILE), { clock: options.clock, log: options.log });
  const { openPostgresStore } = await import('./postgres/store.js');
  return openPostgresStore(settings.DATABASE_URL, {
    clock: options.clock,
    onError: options.onError,
    log: options.log,
  });
}

/** `--check`'s lines for the database DATABASE_URL names (none without it: the data folder's line covers SQLite). */
export async function checkStoreFrom(settings: StoreChoice): Promise<readonly CheckResult[]> {
  if (!settings.DATABASE_URL) return [];
  const { checkPostgres } = await import('./postgres/check.js');
  return checkPostgres(settings.DATABASE_URL);
}
