/** SQLite's failures to write, as the store port reports them: worth another try, or not. */
import { StoreError } from '../../errors.js';

/** Result codes of a write SQLite would refuse again: a broken constraint, a statement that is wrong. */
const REFUSED = /^SQLITE_(CONSTRAINT|MISMATCH|RANGE|ERROR|TOOBIG|SCHEMA)/;

/**
 * A failed write as a StoreError: retryable when SQLite could not write now (SQLITE_FULL, SQLITE_BUSY, SQLITE_LOCKED,
 * SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN, ...). An error of the store's own code is not.
 */
export function writeError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const sqlite = typeof code === 'string' && code.startsWith('SQLITE_');
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError(message, { cause: error, retryable: sqlite && !REFUSED.test(code) });
}
