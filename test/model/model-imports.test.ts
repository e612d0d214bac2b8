/**
 * The model is a second implementation of the rules, not a copy: it may read only the script language, its own
 * files, src/room's event types and the leaf text readers (mentions, code spans, replies) — never decide or the rest
 * of src/room.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const root = normalize(join(here, '..', '..'));
const IMPORT = /^\s*(import|export)\s+(type\s+)?[^'";]*?from\s+['"]([^'"]+)['"]/gm;

/** Every import of `file` and, through them, of the model's own files: [importing file, specifier, type-only]. */
function importsOf(file: string, seen = new Set<string>()): Array<[string, string, boolean]> {
  if (seen.has(file)) return [];
  seen.add(file);
  const out: Array<[string, string, boolean]> = [];
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const spec = m[3] ?? '';
    out.push([file, spec, m[2] !== undefined]);
    if (/^\.\/model(-[a-z]+)?\.js$/.test(spec))
      out.push(...importsOf(join(dirname(file), spec.replace(/\.js$/, '.ts')), seen));
  }
  return out;
}

function allowed(file: string, spec: string, typeOnly: boolean): boolean {
  const target = normalize(join(dirname(file), spec)).slice(root.length + 1);
  if (target === 'test/model/script.js' || /^test\/model\/model(-[a-z]+)?\.js$/.test(target)) return true;
  if (target === 'src/room/events.js') return typeOnly;
  return /^src\/room\/text\/[a-z-]+\.js$/.test(target);
}

describe('the model', () => {
  it('imports only the script language, its own files, the event types and the text readers', () => {
    const found = importsOf(join(here, 'model.ts'));
    expect(found.length).toBeGreaterThan(3);
    const wrong = found
      .filter(([file, spec, typeOnly]) => !allowed(file, spec, typeOnly))
      .map(([file, spec]) => `${file}: ${spec}`);
    expect(wrong).toEqual([]);
  });
});
