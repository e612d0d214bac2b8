/**
 * Whether this process may write the files the bridge keeps (the database, the log), and if not,
 * why, in words that name the file's owner. One `sudo npm start` leaves them root's; SQLite then
 * opens the database read-only without a word and every message fails to be stored.
 */
import { accessSync, constants, mkdirSync, readFileSync, type Stats, statfsSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Creates a folder and its missing parents, one at a time. Node's recursive mkdir never returns
 * under /proc (its mkdir answers ENOENT while the parent is right there, so Node retries the
 * parent for ever); this one stops with the first folder that cannot be made.
 */
export function createFolders(dir: string): void {
  const missing: string[] = [];
  let at = path.resolve(dir);
  const found = statOf(at);
  if (found && !found.isDirectory()) {
    throw Object.assign(new Error(`${at} is not a folder`), { code: 'ENOTDIR', path: at });
  }
  while (!statOf(at)) {
    missing.unshift(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const folder of missing) mkdirSync(folder);
}

/**
 * Whether an existing file may be written by this process: undefined when it may (or is not there).
 * Asked of the system (access), never by opening it: closing a file drops every lock this process
 * holds on it, SQLite's included.
 */
export function unwritable(file: string): NodeJS.ErrnoException | undefined {
  const stats = statOf(file);
  if (!stats) return undefined;
  if (stats.isDirectory()) return Object.assign(new Error(`${file} is a folder`), { code: 'EISDIR' });
  try {
    accessSync(file, constants.W_OK);
    return undefined;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

/** Whether a missing file could be made, judged without making it: the nearest folder above must be writable. */
export function cannotCreate(file: string): NodeJS.ErrnoException | undefined {
  if (statOf(file)) return undefined;
  const found = nearestExisting(path.dirname(file));
  if (!found) return undefined;
  if (!found.stats.isDirectory()) {
    return Object.assign(new Error(`${found.path} is not a folder`), { code: 'ENOTDIR' });
  }
  if (isVirtual(found.path)) return Object.assign(new Error(`${found.path} takes no new files`), { code: 'ENOENT' });
  try {
    accessSync(found.path, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

/**
 * Why `file` (or a folder on its way) could not be written or made, from the error that said so:
 * `belongs to root (uid 0), and this bridge runs as node (uid 1000): sudo chown 1000:1000 FILE`.
 * With `folder`, the fix given is to take back that whole folder (`sudo chown -R`).
 */
export function writeProblem(file: string, error: NodeJS.ErrnoException, folder?: string): string {
  switch (error.code) {
    case 'EACCES':
    case 'EPERM':
      return ownerProblem(file, folder);
    case 'EROFS':
      return 'is on a read-only file system';
    case 'EISDIR':
      return 'is a folder, not a file: move it out of the way';
    case 'ENOTDIR':
    case 'EEXIST': {
      const blocker = nearestExisting(file);
      return blocker && blocker.path !== file
        ? `cannot be made: ${blocker.path} is a file, not a folder`
        : 'is in the way';
    }
    case 'ENOENT':
      // The folder above exists, yet nothing may be made in it: /proc, /sys and their like.
      return 'cannot be made: the file system there takes no new files or folders (such as /proc)';
    default:
      return `cannot be written (${error.code ?? 'error'}: ${error.message})`;
  }
}

/** The owner of the file (or of the nearest folder above it that exists) set against this process's user. */
function ownerProblem(file: string, folder: string | undefined): string {
  const found = nearestExisting(file);
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  if (!found || uid === undefined) return 'may not be written by this user (permission denied)';
  const { path: where, stats } = found;
  const subject = where === file ? '' : `cannot be made: ${where} `;
  if (stats.uid !== uid) {
    const fix = folder ? `sudo chown -R ${uid}:${gid} ${folder}` : `sudo chown ${uid}:${gid} ${where}`;
    return `${subject}belongs to ${userLabel(stats.uid)}, and this bridge runs as ${userLabel(uid)}: ${fix}`;
  }
  const mode = (stats.mode & 0o777).toString(8).padStart(3, '0');
  return `${subject}is read-only for its owner ${userLabel(uid)} (mode ${mode}): chmod u+w ${where}`;
}

/** procfs and sysfs: folders there exist, yet nothing new may be made in them (not even by root). */
const VIRTUAL_FILE_SYSTEMS = new Set([0x9fa0, 0x62656572]);

function isVirtual(folder: string): boolean {
  try {
    return VIRTUAL_FILE_SYSTEMS.has(statfsSync(folder).type);
  } catch {
    return false;
  }
}

function nearestExisting(file: string): { path: string; stats: Stats } | undefined {
  let at = path.resolve(file);
  for (;;) {
    const stats = statOf(at);
    if (stats) return { path: at, stats };
    const parent = path.dirname(at);
    if (parent === at) return undefined;
    at = parent;
  }
}

function statOf(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

let names: Map<number, string> | undefined;

/** `root (uid 0)`, or `uid 1000` when the system has no name for it (a container's user, often). */
export function userLabel(uid: number): string {
  if (!names) {
    names = new Map();
    try {
      for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const [name, , id] = line.split(':');
        if (name && id && !names.has(Number(id))) names.set(Number(id), name);
      }
    } catch {
      // No user database (Windows, a scratch image): numbers only.
    }
  }
  const name = names.get(uid);
  return name ? `${name} (uid ${uid})` : `uid ${uid}`;
}

/** Bytes this process may still write on the file system holding `folder` (or the nearest folder above it). */
export function freeBytes(folder: string): number | undefined {
  const found = nearestExisting(folder);
  if (!found) return undefined;
  try {
    const stats = statfsSync(found.stats.isDirectory() ? found.path : path.dirname(found.path));
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/** `512 KiB`, `3.4 MiB`, `12.0 GiB`. */
export function bytesLabel(bytes: number): string {
  if (bytes < 1024 ** 2) return `${Math.round(bytes / 1024)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/** Whether a SQLite or system error says the disk is full (SQLite reports some of those as an I/O error). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(SQLITE_FULL|SQLITE_IOERR|ENOSPC|EDQUOT)/.test(code);
}

/** What to do about a full disk under `file`, with the space left there. */
export function diskFullAdvice(file: string): string {
  const free = freeBytes(path.dirname(file));
  const left = free === undefined ? 'too little space' : `${bytesLabel(free)} free`;
  return `the file system holding it has ${left}; free some space, or move DATA_DIR to a larger disk`;
}
