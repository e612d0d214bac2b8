#!/usr/bin/env node
// Runs before `npm start`, `npm run check`, `npm run demo` and the setup scripts: builds dist/ when
// it is missing or older than the sources, so "npm install, then npm start" works on a fresh
// checkout. A production install (npm ci --omit=dev: no TypeScript) runs dist/ as it is.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.tsbuildinfo');
const entry = path.join(root, 'dist', 'src', 'main.js');
const SOURCES = ['src', 'adapters', 'sandbox'];
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestSource() {
  let newest = 0;
  const visit = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const dir of SOURCES) visit(path.join(root, dir));
  for (const file of CONFIGS) {
    const full = path.join(root, file);
    if (existsSync(full)) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

let tsc;
try {
  tsc = createRequire(path.join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  tsc = undefined;
}

if (!tsc) {
  if (existsSync(entry)) process.exit(0);
  process.stderr.write(
    'dist/ is missing and TypeScript is not installed: run `npm install` (with dev dependencies), then `npm run build`\n',
  );
  process.exit(1);
}

const built = existsSync(entry) && existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
if (built >= newestSource()) process.exit(0);

process.stderr.write('Building dist/ (npm run build)...\n');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);
// tsc leaves its build info untouched when nothing changed; the stamp must still read as fresh.
const now = new Date();
utimesSync(stamp, now, now);
