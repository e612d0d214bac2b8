import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { TarEntry } from './tar.js';
import { SANDBOX_UID } from './workspace.js';

/**
 * The template folder (SANDBOX_TEMPLATE_DIR) as archive entries owned by the sandbox user, for a workspace the
 * bridge cannot copy into itself (a Docker volume): folders, regular files and symlinks, modes kept.
 */
export async function templateEntries(dir: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const owner = { uid: SANDBOX_UID, gid: SANDBOX_UID };
  const walk = async (folder: string, prefix: string): Promise<void> => {
    for (const name of (await readdir(folder)).sort()) {
      const full = path.join(folder, name);
      const rel = prefix ? `${prefix}/${name}` : name;
      const info = await lstat(full);
      if (info.isDirectory()) {
        entries.push({ name: rel, type: 'directory', mode: info.mode | 0o700, ...owner });
        await walk(full, rel);
      } else if (info.isFile()) {
        entries.push({ name: rel, type: 'file', mode: info.mode | 0o600, content: await readFile(full), ...owner });
      } else if (info.isSymbolicLink()) {
        entries.push({ name: rel, type: 'symlink', mode: 0o777, linkTarget: await readlink(full), ...owner });
      }
    }
  };
  // A missing template folder fails here, with its ENOENT, for the caller to name.
  await lstat(dir);
  await walk(dir, '');
  return entries;
}
