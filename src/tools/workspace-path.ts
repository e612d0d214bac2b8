import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { describeError, RoundtableError } from '../errors.js';
import type { Sandbox, WorkspaceFiles } from '../ports.js';
import type { ToolContext } from './tool.js';

/** Where the workspace appears inside the channel's container; models use this spelling too. */
export const WORKSPACE_MOUNT = '/workspace';

/**
 * The uid of the container's `sandbox` user (sandbox/workspace.ts, both project images).
 * Repeated here because src/ never imports sandbox/.
 */
const SANDBOX_UID = 1000;

/** One item refused or failed; the message is what the model reads, so it never names a host path. */
export class WorkspaceError extends RoundtableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('workspace', message, options);
  }
}

/**
 * The model's spelling of a path (relative, `/workspace/...`, or an absolute host path inside the
 * workspace) as a normalised relative POSIX path; `''` is the workspace itself.
 */
export function toRelative(raw: string, hostRoot: string): string {
  if (raw.trim() === '') throw new WorkspaceError('the path is empty');
  if (raw.includes('\0')) throw new WorkspaceError('the path contains a NUL character');
  let rel: string;
  if (raw === WORKSPACE_MOUNT || raw.startsWith(`${WORKSPACE_MOUNT}/`)) {
    rel = raw.slice(WORKSPACE_MOUNT.length);
  } else if (path.posix.isAbsolute(raw)) {
    const host = path.resolve(hostRoot);
    const normal = path.posix.normalize(raw);
    if (normal !== host && !normal.startsWith(`${host}/`)) {
      throw new WorkspaceError(`absolute paths must be inside ${WORKSPACE_MOUNT}`);
    }
    rel = normal.slice(host.length);
  } else {
    rel = raw;
  }
  const normal = path.posix.normalize(`./${rel}`).replace(/\/+$/, '');
  if (normal === '..' || normal.startsWith('../'))
    throw new WorkspaceError(`the path leads outside ${WORKSPACE_MOUNT}`);
  return normal === '.' ? '' : normal;
}

function isInside(realRoot: string, target: string): boolean {
  return target === realRoot || target.startsWith(`${realRoot}${path.sep}`);
}

function codeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** A file system failure in words, without the host path Node puts in its messages. */
export function describeFsError(error: unknown): string {
  if (error instanceof WorkspaceError) return error.message;
  switch (codeOf(error)) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a parent in the path is a file, not a directory';
    case 'EEXIST':
      return 'a parent in the path exists but is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ELOOP':
      return 'is a symlink that could not be followed safely';
    case 'ENXIO':
      return 'is not a regular file';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    default:
      return codeOf(error) ?? (error instanceof Error ? error.constructor.name : 'failed');
  }
}

export interface Resolved {
  /** The real host path of the deepest part of the path that exists. */
  readonly existing: string;
  /** The segments below `existing` that do not exist yet. */
  readonly missing: readonly string[];
}

/**
 * Walks `rel` one segment at a time from the real workspace root. Symlinks are followed only
 * when their target stays inside the workspace; one pointing out (or nowhere) refuses the item.
 */
export async function resolveInside(realRoot: string, rel: string): Promise<Resolved> {
  const segments = rel === '' ? [] : rel.split('/');
  let current = realRoot;
  for (const [index, segment] of segments.entries()) {
    const next = path.join(current, segment);
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(next);
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return { existing: current, missing: segments.slice(index) };
      throw error;
    }
    if (info.isSymbolicLink()) {
      const shown = segments.slice(0, index + 1).join('/');
      let target: string;
      try {
        target = await realpath(next);
      } catch (error) {
        throw new WorkspaceError(`${shown} is a symlink to something that does not exist`, { cause: error });
      }
      if (!isInside(realRoot, target)) {
        throw new WorkspaceError(`${shown} is a symlink that points outside ${WORKSPACE_MOUNT}`);
      }
      current = target;
    } else {
      current = next;
    }
  }
  return { existing: current, missing: [] };
}

/**
 * Hands a file or folder the bridge created over to the container's user (as sandbox/workspace.ts
 * does for the seeded workspace): chown when running as root, open permissions otherwise.
 * Works on a handle, so a symlink swapped in meanwhile is never followed.
 */
async function handOver(handle: FileHandle, isDirectory: boolean): Promise<void> {
  const uid = process.getuid?.();
  if (uid === 0) await handle.chown(SANDBOX_UID, SANDBOX_UID);
  else if (uid !== SANDBOX_UID) await handle.chmod(isDirectory ? 0o777 : 0o666);
}

/** Creates a folder the bridge then hands over; an existing one is fine. */
export async function makeFolder(folder: string): Promise<void> {
  try {
    await mkdir(folder);
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') throw error;
    return;
  }
  const handle = await open(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    await handOver(handle, true);
  } finally {
    await handle.close();
  }
}

/** An opened workspace: its files, and the host folder they are in when they are in one (absolute paths the model copies from it). */
export interface OpenWorkspace {
  readonly files: WorkspaceFiles;
  readonly hostRoot: string;
}

/**
 * The channel's workspace. A sandbox that keeps it elsewhere (a Docker volume) hands its files over; a host
 * folder is created on first use by the sandbox (seeded from the template), so a missing one is first asked
 * for through a no-op command.
 */
export async function openWorkspace(context: ToolContext): Promise<OpenWorkspace | { error: string }> {
  if (context.sandbox.workspaceFiles) {
    try {
      return { files: await context.sandbox.workspaceFiles(context.channelKey), hostRoot: WORKSPACE_MOUNT };
    } catch (error) {
      return { error: `the workspace is not ready: ${describeError(error)}` };
    }
  }
  const dir = context.sandbox.workspaceDir?.(context.channelKey);
  if (!dir) return { error: 'this room has no workspace: the sandbox is not available' };
  const exists = () =>
    lstat(dir).then(
      () => true,
      () => false,
    );
  if (!(await exists())) {
    try {
      await context.sandbox.exec(context.channelKey, 'true', {
        timeoutMs: context.commandTimeoutMs,
        signal: context.signal,
      });
    } catch (error) {
      return { error: `the workspace is not ready: ${describeError(error)}` };
    }
    try {
      // A sandbox without containers (tests, a fake) leaves the folder to us.
      if (!(await exists())) {
        await mkdir(path.dirname(dir), { recursive: true });
        await makeFolder(dir);
      }
    } catch (error) {
      return { error: `the workspace could not be created: ${describeFsError(error)}` };
    }
  }
  try {
    const root = await realpath(dir);
    return { files: hostFiles(root), hostRoot: root };
  } catch (error) {
    return { error: `the workspace cannot be opened: ${describeFsError(error)}` };
  }
}

/** The files of a workspace that is a host folder (`realRoot`, already resolved). */
export function hostFiles(realRoot: string): WorkspaceFiles {
  return {
    read: (rel, limit) => readStart(realRoot, rel, limit),
    write: (rel, content) => writeInside(realRoot, rel, content),
    async kind(rel) {
      const { existing, missing } = await resolveInside(realRoot, rel);
      if (missing.length > 0) return undefined;
      const info = await lstat(existing);
      return info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other';
    },
    async list(rel) {
      const { existing, missing } = await resolveInside(realRoot, rel);
      if (missing.length > 0) return [];
      const entries = await readdir(existing, { withFileTypes: true }).catch(() => []);
      return entries.map((entry) => ({ name: entry.name, directory: entry.isDirectory() }));
    },
  };
}

/** The workspace files of a room for what arrives from outside (uploads): made when missing, without a command. */
export async function workspaceFilesFor(
  sandbox: Pick<Sandbox, 'workspaceFiles' | 'workspaceDir' | 'ensureWorkspace'>,
  key: string,
): Promise<WorkspaceFiles | undefined> {
  if (sandbox.workspaceFiles) return sandbox.workspaceFiles(key);
  let dir = await sandbox.ensureWorkspace?.(key);
  if (!dir) {
    dir = sandbox.workspaceDir?.(key);
    if (!dir) return undefined;
    const exists = await lstat(dir).then(
      () => true,
      () => false,
    );
    if (!exists) await mkdir(dir, { recursive: true });
  }
  return hostFiles(await realpath(dir));
}

/** Opens a regular file inside the workspace for reading; never follows a symlink, never blocks on a FIFO. */
async function openForRead(realRoot: string, rel: string): Promise<FileHandle> {
  const { existing, missing } = await resolveInside(realRoot, rel);
  if (missing.length > 0) throw new WorkspaceError('no such file');
  const handle = await open(existing, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new WorkspaceError('is a directory (list it with glob)');
    if (!info.isFile()) throw new WorkspaceError('is not a regular file');
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The first `limit` bytes of a regular file inside the workspace, and its whole size. */
export async function readStart(
  realRoot: string,
  rel: string,
  limit: number,
): Promise<{ bytes: Buffer; size: number }> {
  const handle = await openForRead(realRoot, rel);
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(Math.min(size, limit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { bytes: buffer.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}

/** Writes `content` to `rel` inside the workspace, creating parent folders; never writes through a symlink out. */
export async function writeInside(realRoot: string, rel: string, content: Uint8Array): Promise<void> {
  if (rel === '') throw new WorkspaceError(`${WORKSPACE_MOUNT} itself is a directory`);
  const segments = rel.split('/');
  const name = segments.pop() ?? '';
  const parent = await resolveInside(realRoot, segments.join('/'));
  let folder = parent.existing;
  for (const segment of parent.missing) {
    folder = path.join(folder, segment);
    await makeFolder(folder);
  }
  // The final name may itself be a symlink (to a file inside the workspace, or not).
  const target = await resolveInside(realRoot, segments.length > 0 ? `${segments.join('/')}/${name}` : name);
  const file = target.missing.length > 0 ? path.join(folder, name) : target.existing;
  const created = target.missing.length > 0;
  const handle = await open(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    0o644,
  );
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new WorkspaceError('is a directory');
    if (!info.isFile()) throw new WorkspaceError('is not a regular file');
    // Truncate only once it is known to be a regular file.
    await handle.truncate(0);
    await handle.writeFile(content);
    if (created) await handOver(handle, false);
  } finally {
    await handle.close();
  }
}
