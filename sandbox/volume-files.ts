/**
 * A channel's workspace files when the workspace is a Docker volume: read and written through the engine's
 * archive API on the channel's container (HEAD for what is at a path, GET to read, PUT to write), listed with
 * one `find` in the container. Paths are walked one segment at a time, as on a host folder: a symlink is followed
 * only while it stays inside /workspace.
 */
import path from 'node:path';
import type { Readable } from 'node:stream';
import type Dockerode from 'dockerode';
import type { WorkspaceEntryKind, WorkspaceFiles } from '../src/ports.js';
import { WorkspaceError } from '../src/tools/workspace-path.js';
import { WORKSPACE_MOUNT } from './container-spec.js';
import { hasStatus } from './docker-errors.js';
import { FrameDecoder } from './frame-decoder.js';
import { packTar, readFirstFile, type TarEntry } from './tar.js';
import { SANDBOX_UID } from './workspace.js';

/** Go's os.FileMode type bits, as the engine reports them in X-Docker-Container-Path-Stat. */
const MODE_DIR = 2 ** 31;
const MODE_SYMLINK = 2 ** 27;
const MODE_TYPE =
  MODE_DIR | (2 ** 30) | (2 ** 29) | MODE_SYMLINK | (2 ** 26) | (2 ** 25) | (2 ** 24) | (2 ** 21) | (2 ** 19);

interface PathStat {
  readonly mode: number;
  readonly size: number;
  readonly linkTarget: string;
}

const inside = (target: string) => target === WORKSPACE_MOUNT || target.startsWith(`${WORKSPACE_MOUNT}/`);

/** How long listing a folder may take (a helper exec; generous on a busy machine). */
const LIST_TIMEOUT_MS = 30_000;
/** A listing longer than this is cut (the glob tool stops far earlier). */
const LIST_LIMIT_BYTES = 8 * 1024 * 1024;

export function volumeFiles(container: Dockerode.Container): WorkspaceFiles {
  const stat = async (target: string): Promise<PathStat | undefined> => {
    try {
      const response = (await container.infoArchive({ path: target })) as Readable & {
        headers: Record<string, string>;
      };
      // The answer to a HEAD is a stream with no body: read to its end, so its connection is let go.
      response.resume();
      const encoded = response.headers['x-docker-container-path-stat'];
      if (!encoded) return undefined;
      return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as PathStat;
    } catch (error) {
      // A path that is not there; the container itself was made sure of just before.
      if (hasStatus(error, 404)) return undefined;
      throw error;
    }
  };

  /** The real path in the container of the deepest part of `rel` that exists, and what is missing below it. */
  const resolve = async (rel: string): Promise<{ existing: string; missing: string[]; stat: PathStat | undefined }> => {
    const segments = rel === '' ? [] : rel.split('/');
    let current = WORKSPACE_MOUNT;
    let found: PathStat | undefined;
    for (const [index, segment] of segments.entries()) {
      const next = path.posix.join(current, segment);
      const info = await stat(next);
      if (!info) return { existing: current, missing: segments.slice(index), stat: found };
      if ((info.mode & MODE_SYMLINK) !== 0) {
        const shown = segments.slice(0, index + 1).join('/');
        if (!inside(info.linkTarget)) {
          throw new WorkspaceError(`${shown} is a symlink that points outside ${WORKSPACE_MOUNT}`);
        }
        const target = await stat(info.linkTarget);
        if (!target) throw new WorkspaceError(`${shown} is a symlink to something that does not exist`);
        current = info.linkTarget;
        found = target;
      } else {
        current = next;
        found = info;
      }
    }
    return { existing: current, missing: [], stat: found ?? (await stat(current)) };
  };

  const kindOf = (info: PathStat): WorkspaceEntryKind =>
    (info.mode & MODE_DIR) !== 0 ? 'directory' : (info.mode & MODE_TYPE) === 0 ? 'file' : 'other';

  return {
    async read(rel, limit) {
      const { missing, stat: info, existing } = await resolve(rel);
      if (missing.length > 0 || !info) throw new WorkspaceError('no such file');
      const kind = kindOf(info);
      if (kind === 'directory') throw new WorkspaceError('is a directory (list it with glob)');
      if (kind !== 'file') throw new WorkspaceError('is not a regular file');
      const stream = (await container.getArchive({ path: existing })) as Readable;
      const file = await readFirstFile(stream, limit);
      if (!file) throw new WorkspaceError('is not a regular file');
      return file;
    },

    async write(rel, content) {
      if (rel === '') throw new WorkspaceError(`${WORKSPACE_MOUNT} itself is a directory`);
      const segments = rel.split('/');
      const name = segments.pop() ?? '';
      const parent = await resolve(segments.join('/'));
      if (parent.missing.length === 0 && parent.stat && kindOf(parent.stat) !== 'directory') {
        throw new WorkspaceError('a parent in the path is a file, not a directory');
      }
      const owner = { uid: SANDBOX_UID, gid: SANDBOX_UID };
      const entries: TarEntry[] = [];
      let folder = '';
      for (const segment of parent.missing) {
        folder = folder ? `${folder}/${segment}` : segment;
        entries.push({ name: folder, type: 'directory', mode: 0o755, ...owner });
      }
      let destination = parent.existing;
      let fileName = folder ? `${folder}/${name}` : name;
      if (parent.missing.length === 0) {
        // The final name may itself be a symlink (to a file inside the workspace, or not).
        const target = await resolve(segments.length > 0 ? `${segments.join('/')}/${name}` : name);
        if (target.missing.length === 0 && target.stat) {
          const kind = kindOf(target.stat);
          if (kind === 'directory') throw new WorkspaceError('is a directory');
          if (kind !== 'file') throw new WorkspaceError('is not a regular file');
          destination = path.posix.dirname(target.existing);
          fileName = path.posix.basename(target.existing);
        }
      }
      entries.push({ name: fileName, type: 'file', mode: 0o644, content, ...owner });
      await container.putArchive(packTar(entries), { path: destination });
    },

    async kind(rel) {
      const { missing, stat: info } = await resolve(rel);
      if (missing.length > 0 || !info) return undefined;
      return kindOf(info);
    },

    async list(rel) {
      const { missing, stat: info, existing } = await resolve(rel);
      if (missing.length > 0 || !info || kindOf(info) !== 'directory') return [];
      // As the sandbox user: only what it may see. NUL-separated, so any name survives.
      const listing = await collect(container, [
        'find',
        existing,
        '-mindepth',
        '1',
        '-maxdepth',
        '1',
        '-printf',
        '%y%f\\0',
      ]);
      return listing
        .split('\0')
        .filter((item) => item.length > 1)
        .map((item) => ({ name: item.slice(1), directory: item[0] === 'd' }));
    },
  };
}

/** Runs a helper command in the container and returns its standard output whole (up to a bound). */
async function collect(container: Dockerode.Container, cmd: string[]): Promise<string> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = (await exec.start({ hijack: true, stdin: false, Detach: false, Tty: false })) as Readable;
  const chunks: Buffer[] = [];
  let size = 0;
  const decoder = new FrameDecoder((payload, kind) => {
    if (kind !== 1 || size >= LIST_LIMIT_BYTES) return;
    chunks.push(Buffer.from(payload));
    size += payload.length;
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    new Promise<void>((resolve) => {
      stream.on('data', (chunk: Buffer) => decoder.write(chunk));
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    }),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, LIST_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  stream.destroy();
  return Buffer.concat(chunks).toString('utf8');
}
