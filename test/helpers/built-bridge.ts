/**
 * The built bridge (`dist/src/main.js`, what `npm start` runs), built first when it is missing or
 * older than the sources, as `npm start` itself does (scripts/ensure-built.mjs). Test files that
 * run it at the same time take turns through a lock, so one of them builds and the others wait.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const BUILT_MAIN = path.join(ROOT, 'dist', 'src', 'main.js');

let built = false;

/** Builds dist/ when it is stale; returns the entry point. Takes up to a few minutes on a busy machine. */
export function builtBridge(): string {
  if (built) return BUILT_MAIN;
  const ensure = [process.execPath, path.join(ROOT, 'scripts', 'ensure-built.mjs')];
  const hasFlock = spawnSync('flock', ['--version'], { stdio: 'ignore' }).status === 0;
  // The lock is taken on the checkout's own folder: nothing is made for it, so nothing is left behind.
  const [command = '', ...args] = hasFlock ? ['flock', ROOT, ...ensure] : ensure;
  execFileSync(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });
  built = true;
  return BUILT_MAIN;
}
