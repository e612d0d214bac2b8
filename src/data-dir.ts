import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError, RoundtableError } from './errors.js';
import {
  bytesLabel,
  createFolders,
  diskFullAdvice,
  freeBytes,
  isDiskFull,
  unwritable,
  writeProblem,
} from './file-access.js';

/** Why a data folder cannot be used, from the error code of creating or probing it. */
export function dataDirProblem(code: string | undefined): string {
  switch (code) {
    case 'EROFS':
      return 'is on a read-only file system';
    case 'EACCES':
    case 'EPERM':
      return 'cannot be created or written by this user (permission denied)';
    case 'ENOTDIR':
    case 'EEXIST':
      return 'is not a folder (or a file is in the way)';
    case 'ENOENT':
      // mkdir said "no such folder" of a parent that exists: /proc, /sys and their like.
      return 'cannot be created: the file system there takes no new folders (such as /proc)';
    default:
      return `cannot be used (${code ?? 'unknown error'})`;
  }
}

/** Makes sure DATA_DIR exists and is writable; the error names the variable and the path. */
export function prepareDataDir(dir: string): void {
  try {
    createFolders(dir);
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new ConfigError('environment', 'DATA_DIR', `${dir} ${dataDirProblem((error as NodeJS.ErrnoException).code)}`);
  }
}

/** Below this much free space, `--check` fails the data folder: a new database alone takes about 0.6 MB. */
export const MIN_FREE_BYTES = 16 * 1024 ** 2;

/** Why the data folder's disk is too full for the bridge, or undefined when it has room (or cannot tell). */
export function dataDirSpace(dir: string): string | undefined {
  const free = freeBytes(dir);
  if (free === undefined || free >= MIN_FREE_BYTES) return undefined;
  return (
    `${dir} has only ${bytesLabel(free)} free: the database needs room to grow (a new one takes about 0.6 MB, ` +
    'and every message adds to it); free some space, or move DATA_DIR to a larger disk'
  );
}

/** The database, the files SQLite keeps beside it, and the lock: what the bridge writes in DATA_DIR. */
export const DATA_FILES = ['roundtable.db', 'roundtable.db-wal', 'roundtable.db-shm', 'roundtable.lock'] as const;

/**
 * Refuses a data folder whose files this process may not write (root's after a `sudo npm start`, or a
 * folder where the database should be), naming the file and its owner. SQLite would open such a
 * database read-only without a word, and every message would then fail to be stored.
 */
export function checkDataFiles(dir: string): void {
  for (const name of DATA_FILES) {
    const file = path.join(dir, name);
    const error = unwritable(file);
    if (error) throw new ConfigError('environment', 'DATA_DIR', `${file} ${writeProblem(file, error, dir)}`);
  }
}

/** Held while a bridge runs on a data folder; `release` on shutdown. */
export interface DataDirLock {
  release(): void;
}

export const LOCK_FILE = 'roundtable.lock';

/**
 * Takes the data folder for this process: an exclusive SQLite lock on DATA_DIR/roundtable.lock.
 * The lock is the operating system's (a POSIX record lock), so it goes with the process however
 * it ends, kill -9 included: nothing stale to clean up, and no PID file (which misleads when the
 * bridge is PID 1 of every container). A second bridge on the same folder is refused before it
 * touches the store or the first one's sandbox containers.
 */
export function lockDataDir(dir: string): DataDirLock {
  const file = path.join(dir, LOCK_FILE);
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { timeout: 0 });
    // Exclusive locking mode keeps the lock of the first write until the connection closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY, pid INTEGER, since INTEGER)');
    db.prepare('INSERT OR REPLACE INTO holder VALUES (1, ?, ?)').run(process.pid, Date.now());
  } catch (error) {
    db?.close();
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new RoundtableError(
        'locked',
        `another Roundtable bridge is running on DATA_DIR ${dir} (it holds ${file}); stop it first, or give this one its own DATA_DIR`,
      );
    }
    const full = isDiskFull(error) ? `: ${diskFullAdvice(file)}` : '';
    throw new ConfigError('environment', 'DATA_DIR', `cannot lock ${file}: ${(error as Error).message}${full}`);
  }
  const holder = db;
  return {
    release() {
      if (holder.open) holder.close();
    },
  };
}
