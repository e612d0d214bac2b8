import { chmod, chown, cp, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { createFolders } from '../src/file-access.js';

/** The uid/gid of the `sandbox` user in the project's images (Dockerfile and offline build). */
export const SANDBOX_UID = 1000;

/**
 * Creates the channel's host workspace when it does not exist yet, seeded from the template
 * folder, and makes it writable by the container's user. Returns true when it was created.
 */
export async function prepareWorkspace(dir: string, templateDir: string | undefined): Promise<boolean> {
  const exists = await lstat(dir).then(
    () => true,
    () => false,
  );
  if (exists) return false;
  createFolders(path.dirname(dir));
  if (templateDir) {
    await cp(templateDir, dir, { recursive: true, errorOnExist: false, force: true });
  } else {
    await mkdir(dir);
  }
  await grantToSandboxUser(dir);
  return true;
}

/** Deletes the channel's workspace (`/reset workspace`); the next container is seeded afresh. */
export async function wipeWorkspace(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * The container runs as uid 1000 with every capability dropped, so it cannot chown anything:
 * the host side hands the files over. As root we chown; otherwise (a bridge running as an
 * ordinary user) we open the permissions instead.
 */
async function grantToSandboxUser(target: string): Promise<void> {
  const info = await lstat(target);
  if (info.isSymbolicLink()) return;
  if (process.getuid?.() === 0) {
    await chown(target, SANDBOX_UID, SANDBOX_UID);
  } else if (info.uid !== SANDBOX_UID) {
    await chmod(target, info.isDirectory() ? 0o777 : info.mode | 0o666);
  }
  if (info.isDirectory()) {
    for (const entry of await readdir(target)) await grantToSandboxUser(path.join(target, entry));
  }
}
