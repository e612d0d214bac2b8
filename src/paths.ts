import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The project folder (the one with package.json): the same from the TypeScript sources
 * (src/paths.ts) and from the built layout (dist/src/paths.js), so files read at run time
 * (migrations/, sandbox/runner.py, the demo's agents and workspace) are found either way.
 */
export function packageRoot(): string {
  if (root) return root;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  root = dir;
  return dir;
}

/** A path inside the project folder. */
export function packagePath(...parts: string[]): string {
  return path.join(packageRoot(), ...parts);
}
