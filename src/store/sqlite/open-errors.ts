/** Why the SQLite store could not be opened at start, in words that name the file and what to do. */
import { RoundtableError } from '../../errors.js';
import { diskFullAdvice, isDiskFull } from '../../file-access.js';

export function openProblem(file: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new RoundtableError(
      'locked',
      `${file} is locked by another process: most likely another Roundtable bridge on the same DATA_DIR ` +
        '(in a container, or on a machine sharing the folder) or a tool holding it open (sqlite3); ' +
        'stop it, or give this bridge its own DATA_DIR',
      { cause: error },
    );
  }
  if (isDiskFull(error)) {
    const said = error instanceof Error ? error.message : String(code);
    return new RoundtableError('store', `${file} cannot be written (${said}): ${diskFullAdvice(file)}`, {
      cause: error,
    });
  }
  return error;
}
