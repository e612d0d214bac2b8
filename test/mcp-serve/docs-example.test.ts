/**
 * docs/mcp.md's tokens example, run as written by bash in a folder set up for the web room: `npm run web:invite` and
 * `npm run mcp` are the real commands. A token must come out, and its revocation.
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

/** The first ```bash block of docs/mcp.md, without the indentation of the list item it is in. */
function firstBashBlock(): string {
  const page = readFileSync(path.join(ROOT, 'docs', 'mcp.md'), 'utf8');
  const block = /( *)```bash\n([\s\S]*?)\1```/.exec(page);
  if (!block) throw new Error('docs/mcp.md has no bash block');
  const indent = block[1]?.length ?? 0;
  return (block[2] ?? '')
    .split('\n')
    .map((line) => line.slice(indent))
    .join('\n');
}

/** `npm run <script> -- …` runs the script's source with tsx. */
const NPM = `npm() {
  [ "$1" = run ] && [ "$3" = -- ] || { echo "unexpected: npm $*" >&2; return 9; }
  case "$2" in
    web:invite) script=invite-cli ;;
    mcp) script=mcp-cli ;;
    *) echo "unexpected: npm $*" >&2; return 9 ;;
  esac
  shift 3; "$TSX" "$ROOT/adapters/web/$script.ts" "$@"
}
set -e
`;

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/mcp.md's tokens example", () => {
  it('makes ana an operator, prints her token once, and revokes it, run as written', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-mcp-docs-'));
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(path.join(dir, 'agents', 'code.md'), '---\nname: code\nmodel: m\n---\nYou write code.\n');
    writeFileSync(path.join(dir, '.env'), 'WEB_PORT=8088\n');
    const env = { PATH: process.env.PATH ?? '', HOME: dir, TSX, ROOT };
    const ran = await exec('bash', ['-c', `${NPM}${firstBashBlock()}`], { cwd: dir, env, timeout: 120_000 }).catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toMatch(/^Sign-in link for ana \(operator\)/m);
    expect(ran.stdout).toMatch(/^rtmcp_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/m);
    expect(ran.stdout).toMatch(/^ana: 1 token revoked; their clients are refused from now on\.$/m);
  }, 150_000);
});
