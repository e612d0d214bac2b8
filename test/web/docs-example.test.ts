/**
 * docs/web.md's first example, run as written by bash in a fresh folder with one agent: `npm start` stands for the
 * bridge (not started here), `npm run web:invite` is the real command. Its link must come out.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

/** The first ```bash block of a page. */
function firstBashBlock(page: string): string {
  const block = /```bash\n([\s\S]*?)```/.exec(readFileSync(path.join(ROOT, 'docs', page), 'utf8'))?.[1];
  if (block === undefined) throw new Error(`${page} has no bash block`);
  return block;
}

/** `npm` as the example uses it: start stands for the bridge, `run web:invite -- …` runs the command itself. */
const NPM = `npm() {
  case "$1" in
    start) echo "npm start: the bridge runs here" ;;
    run) [ "$2" = web:invite ] && [ "$3" = -- ] || { echo "unexpected: npm $*" >&2; return 9; }
         shift 3; "$TSX" "$ROOT/adapters/web/invite-cli.ts" "$@" ;;
    *) echo "unexpected: npm $*" >&2; return 9 ;;
  esac
}
set -e
`;

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/web.md's first example", () => {
  it('prints a sign-in link at the public address, run as written', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-web-docs-'));
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(path.join(dir, 'agents', 'code.md'), '---\nname: code\nmodel: m\n---\nYou write code.\n');
    const env = { PATH: process.env.PATH ?? '', HOME: dir, TSX, ROOT };
    const ran = await exec('bash', ['-c', `${NPM}${firstBashBlock('web.md')}`], {
      cwd: dir,
      env,
      timeout: 120_000,
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toMatch(/^https:\/\/chat\.example\.org\/signin\/[A-Za-z0-9_-]{43}$/m);
  }, 150_000);
});
