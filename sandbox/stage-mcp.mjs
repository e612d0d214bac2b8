#!/usr/bin/env node
// Stages Node and npm MCP servers for the sandbox image, into a folder laid out like the image's root:
//   usr/local/bin/node                    this Node binary (the one running this script)
//   opt/mcp/node_modules/...              each package with its dependency closure, as installed here
//   usr/local/bin/<bin>                   a link to each package's bin (on the image's PATH)
//   usr/local/lib/roundtable/mcp.txt      what was staged (node and name@version lines): the build compares it
// Packages come from a node_modules folder already installed (no registry needed).
//
// Usage: node sandbox/stage-mcp.mjs DEST NODE_MODULES [PACKAGE...]
//        node sandbox/stage-mcp.mjs --manifest NODE_MODULES [PACKAGE...]   prints what would be staged
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

const MANIFEST = 'usr/local/lib/roundtable/mcp.txt';

function fail(message) {
  process.stderr.write(`[sandbox:build] ${message}\n`);
  process.exit(1);
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Where `name` resolves from package folder `from`, the way Node looks it up (nearest node_modules first). */
function resolveFrom(root, from, name) {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.resolve(dir) === path.resolve(path.dirname(root))) return undefined;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Every package folder the given packages need at run time, relative to `root` (a node_modules folder). */
function closure(root, names) {
  const found = new Map();
  const queue = [];
  for (const name of names) {
    const dir = path.join(root, name);
    if (!existsSync(path.join(dir, 'package.json'))) fail(`${name} is not installed in ${root}`);
    queue.push(dir);
  }
  while (queue.length > 0) {
    const dir = queue.shift();
    const relative = path.relative(root, dir);
    if (found.has(relative)) continue;
    const manifest = readJson(path.join(dir, 'package.json'));
    found.set(relative, manifest);
    const needed = { ...manifest.peerDependencies, ...manifest.optionalDependencies, ...manifest.dependencies };
    for (const name of Object.keys(needed)) {
      const resolved = resolveFrom(root, dir, name);
      if (resolved) queue.push(resolved);
      else if (manifest.dependencies?.[name]) fail(`${name}, needed by ${manifest.name}, is not installed`);
    }
  }
  return found;
}

function manifestText(names, root) {
  const lines = [`node ${process.version}`];
  for (const name of names) lines.push(`${name}@${readJson(path.join(root, name, 'package.json')).version}`);
  return `${lines.join('\n')}\n`;
}

const args = process.argv.slice(2);
if (args[0] === '--manifest') {
  const [, modules, ...names] = args;
  process.stdout.write(manifestText(names, path.resolve(modules)));
  process.exit(0);
}
const [dest, modules, ...names] = args;
if (!dest || !modules) fail('usage: stage-mcp.mjs DEST NODE_MODULES [PACKAGE...]');
const root = path.resolve(modules);
const bin = path.join(dest, 'usr/local/bin');
mkdirSync(bin, { recursive: true });
cpSync(realpathSync(process.execPath), path.join(bin, 'node'));
chmodSync(path.join(bin, 'node'), 0o755);

const packages = closure(root, names);
for (const relative of packages.keys()) {
  // Each package without its own node_modules: what of that it needs is in the closure, at its own place.
  cpSync(path.join(root, relative), path.join(dest, 'opt/mcp/node_modules', relative), {
    recursive: true,
    dereference: true,
    filter: (source) => path.basename(source) !== 'node_modules' || source === path.join(root, relative),
  });
}
for (const name of names) {
  const manifest = packages.get(name);
  const bins = typeof manifest.bin === 'string' ? { [name.split('/').pop()]: manifest.bin } : (manifest.bin ?? {});
  for (const [command, file] of Object.entries(bins)) {
    const target = path.posix.join('/opt/mcp/node_modules', name, file);
    chmodSync(path.join(dest, target), 0o755);
    symlinkSync(target, path.join(bin, command));
  }
}
mkdirSync(path.dirname(path.join(dest, MANIFEST)), { recursive: true });
writeFileSync(path.join(dest, MANIFEST), manifestText(names, root));
process.stderr.write(
  `[sandbox:build] staged node ${process.version} and ${packages.size} packages for ${names.join(' ')}\n`,
);
