import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const sources = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
const importsOf = (file: string) =>
  [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(
    (m) => m[1] ?? '',
  );

describe('architecture', () => {
  it('keeps platform SDKs and dockerode out of src/ (ports point inward)', () => {
    const offenders = sources('src').flatMap((file) =>
      importsOf(file)
        .filter((spec) => /^(discord\.js|@discordjs\/|@slack\/|dockerode)/.test(spec))
        .map((spec) => `${file} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it('lets only the composition root import adapters/ and sandbox/', () => {
    const offenders = sources('src')
      .filter((file) => file !== path.join('src', 'main.ts'))
      .flatMap((file) =>
        importsOf(file)
          .filter((spec) => /(^|\/)(adapters|sandbox)\//.test(spec))
          .map((spec) => `${file} imports ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  it('keeps src/room/ pure: no I/O, no clock, no randomness', () => {
    const offenders = sources('src/room').flatMap((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const bad = [/from 'node:/, /Date\.now|new Date\(/, /Math\.random/, /process\./].filter((re) => re.test(text));
      return bad.map((re) => `${file}: ${re}`);
    });
    expect(offenders).toEqual([]);
  });
});
