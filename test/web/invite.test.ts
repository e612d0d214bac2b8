import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inviteMain } from '../../adapters/web/invite-cli.js';
import { personNameProblem } from '../../adapters/web/names.js';
import { digest } from '../../adapters/web/secrets.js';
import { toolStatus } from '../../adapters/web/tool-status.js';
import { openStore } from '../../src/store/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-invite-'));
  mkdirSync(path.join(dir, 'agents'));
  writeFileSync(path.join(dir, 'agents', 'code.md'), '---\nname: code\nmodel: m\n---\nYou write code.\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function invite(argv: string[], env: Record<string, string> = { WEB_PORT: '8088' }) {
  let out = '';
  let err = '';
  const code = await inviteMain(argv, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    cwd: dir,
    env: { AGENTS_DIR: './agents', DATA_DIR: './data', ...env },
  });
  return { code, out, err };
}

describe('npm run web:invite', () => {
  it('prints a one-time sign-in link for a person, who is then listed; --operator makes them an operator', async () => {
    const made = await invite(['ana', '--operator']);
    expect(made.code).toBe(0);
    const link = /^(http:\/\/127\.0\.0\.1:8088\/signin\/([A-Za-z0-9_-]{43}))$/m.exec(made.out);
    expect(made.out).toContain('Sign-in link for ana (operator), valid for one hour, once:');
    expect(link).not.toBeNull();
    const store = openStore(path.join(dir, 'data', 'roundtable.db'));
    try {
      expect(await store.people.invited(digest(link?.[2] ?? ''), Date.now())).toEqual({ name: 'ana', operator: true });
    } finally {
      await store.close();
    }
    await invite(['ben']);
    expect((await invite(['--list'])).out).toBe('ana (operator): 0 sessions\nben: 0 sessions\n');
  });

  it('uses WEB_PUBLIC_URL for the link, and says what to set when the web room is off', async () => {
    const made = await invite(['ana'], { WEB_PORT: '0', WEB_PUBLIC_URL: 'https://chat.example.org/' });
    expect(made.out).toMatch(/^https:\/\/chat\.example\.org\/signin\/[A-Za-z0-9_-]{43}$/m);
    const off = await invite(['ana'], {});
    expect(off).toMatchObject({ code: 1, out: '' });
    expect(off.err).toBe(
      'web:invite failed: environment: WEB_PORT: is not set, so the web room is off (set it, and WEB_PUBLIC_URL, in .env: npm start and web:invite both read it)\n',
    );
    const anyPort = await invite(['ana'], { WEB_PORT: '0' });
    expect(anyPort.err).toMatch(/WEB_PUBLIC_URL: is needed when WEB_PORT is 0/);
  });

  it("refuses an agent's name, the room's own words and names that are no mention, in one line", async () => {
    for (const [name, problem] of [
      ['Code', 'is the name of the agent @code'],
      ['system', 'a word the room uses'],
      ['Human', 'a word the room uses'],
      ['ana smith', 'is not a name'],
      ['ana.', 'is not a name'],
    ] as const) {
      const refused = await invite([name]);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain(problem);
      expect(refused.err.trim().split('\n')).toHaveLength(1);
    }
    expect((await invite(['--list'])).out).toBe('Nobody is invited yet: npm run web:invite -- <name>\n');
  });

  it('revokes a person: their sessions end', async () => {
    await invite(['ana']);
    const store = openStore(path.join(dir, 'data', 'roundtable.db'));
    try {
      await store.people.invite({ name: 'ana', operator: false }, 'code', 0, Date.now() + 60_000);
      await store.people.redeem('code', 'token', Date.now(), Date.now() + 60_000);
      const revoked = await invite(['--revoke', 'ANA']);
      expect(revoked).toMatchObject({ code: 0, out: 'ana: 1 session ended; their open pages close within seconds.\n' });
      expect(await store.people.session('token', Date.now())).toBeUndefined();
    } finally {
      await store.close();
    }
    expect(await invite(['--revoke', 'nobody'])).toMatchObject({ code: 1 });
  });

  it('says how to use it when the command line is wrong', async () => {
    for (const argv of [[], ['ana', '--list'], ['--operator'], ['ana', 'ben'], ['--bogus']]) {
      const wrong = await invite(argv);
      expect(wrong.code).toBe(2);
      expect(wrong.err).toContain('usage: npm run web:invite -- <name> [--operator]');
    }
  });
});

describe('names and tool runs on the page', () => {
  it('takes names a mention can read', () => {
    expect(personNameProblem('ana', ['code'])).toBeUndefined();
    expect(personNameProblem('José', ['code'])).toBeUndefined();
    expect(personNameProblem('jane.doe', ['code'])).toBeUndefined();
    expect(personNameProblem('a', [])).toBeUndefined();
    expect(personNameProblem('x'.repeat(33), [])).toMatch(/not a name/);
    expect(personNameProblem('-ana', [])).toMatch(/not a name/);
  });

  it('labels how a tool run ended from what the tool wrote', () => {
    expect(toolStatus('bash', 'total 0')).toBe('exit 0');
    expect(toolStatus('bash', 'oops\n[exit code: 2]')).toBe('exit 2');
    expect(toolStatus('bash', 'partial\n[ERROR: Command timed out after 30s]')).toBe('timed out');
    expect(toolStatus('bash', '[ERROR: the sandbox failed: no engine]')).toBe('failed');
    expect(toolStatus('write_file', 'wrote 12 bytes')).toBe('done');
    expect(toolStatus('write_file', '[ERROR: refused]')).toBe('failed');
  });
});
