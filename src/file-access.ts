/**
 * Folders and files the bridge makes for itself (the data folder, the log's folder).
 */
import { mkdirSync, type Stats, statSync } from 'node:fs';
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

function statOf(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
