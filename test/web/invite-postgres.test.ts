/**
 * `npm run web:invite` on Postgres: with DATABASE_URL set it invites, lists and revokes in the database the bridge
 * uses, and writes no SQLite file. A throw-away cluster for this file (test/helpers/postgres.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inviteMain } from '../../adapters/web/invite-cli.js';
import { digest } from '../../adapters/web/secrets.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';

const pg = migratedPostgres();

describe.runIf(pg.plan.run)('npm run web:invite on Postgres', () => {
  let dir: string;
  let database: { name: string; url: string };
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rt-invite-pg-'));
    mkdirSync(path.join(dir, 'agents'));
    writeFileSync(path.join(dir, 'agents', 'code.md'), '---\nname: code\nmodel: m\n---\nYou write code.\n');
    database = await pg.cluster().createDatabase({ from: pg.migrated() });
  });
  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true });
    await pg.cluster().dropDatabase(database.name);
  });

  async function invite(argv: string[]) {
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
      env: { AGENTS_DIR: './agents', DATA_DIR: './data', WEB_PORT: '8088', DATABASE_URL: database.url },
    });
    return { code, out, err };
  }

  it('invites, lists and revokes in the database the bridge uses, and writes no SQLite file', async () => {
    const made = await invite(['ana', '--operator']);
    expect(made).toMatchObject({ code: 0, err: '' });
    const code = /\/signin\/([A-Za-z0-9_-]{43})$/m.exec(made.out)?.[1] ?? '';
    const store = await openPostgresStore(database.url);
    try {
      expect(await store.people.invited(digest(code), Date.now())).toEqual({ name: 'ana', operator: true });
      expect((await invite(['--list'])).out).toBe('ana (operator): 0 sessions\n');
      await store.people.redeem(digest(code), 'token', Date.now(), Date.now() + 60_000);
      expect((await invite(['--list'])).out).toMatch(/^ana \(operator\): 1 session, last seen /);
      const revoked = await invite(['--revoke', 'ana']);
      expect(revoked).toMatchObject({ code: 0, out: 'ana: 1 session ended; their open pages close within seconds.\n' });
      expect(await store.people.session('token', Date.now())).toBeUndefined();
    } finally {
      await store.close();
    }
    expect(existsSync(path.join(dir, 'data', 'roundtable.db'))).toBe(false);
  });
});
