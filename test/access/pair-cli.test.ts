/** `npm run pair`: approving, listing and ending DM pairings from the command line, on the bridge's store. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pairMain } from '../../src/access/pair-cli.js';
import { openStore } from '../../src/store/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-pair-'));
  mkdirSync(path.join(dir, 'agents'));
  mkdirSync(path.join(dir, 'data'));
  writeFileSync(path.join(dir, 'agents', 'code.md'), '---\nname: code\nmodel: m\n---\nYou write code.\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function pair(argv: string[]) {
  let out = '';
  let err = '';
  const code = await pairMain(argv, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    cwd: dir,
    env: { AGENTS_DIR: './agents', DATA_DIR: './data' },
  });
  return { code, out, err };
}

async function waitingCode(): Promise<string> {
  const store = openStore(path.join(dir, 'data', 'roundtable.db'));
  try {
    const now = Date.now();
    const got = await store.access.requestCode({
      code: 'ABCD-EFGH',
      platform: 'slack',
      userId: 'U42',
      name: 'dana',
      now,
      expiresAt: now + 3_600_000,
      maxPending: 3,
    });
    return got === 'full' ? '' : got.code;
  } finally {
    await store.close();
  }
}

describe('npm run pair', () => {
  it('lists the codes waiting, approves one (any case, no dash), and ends the pairing', async () => {
    const code = await waitingCode();
    expect((await pair(['--list'])).out).toContain(`Waiting for approval: ${code} dana (slack U42,`);
    const approved = await pair(['abcdefgh']);
    expect(approved).toMatchObject({ code: 0, out: 'dana (slack U42) may now DM the agents.\n' });
    expect((await pair(['--list'])).out).toContain('Paired: dana (slack U42).');
    const again = await pair([code]);
    expect(again.code).toBe(1);
    expect(again.out).toContain(`No code ${code} is waiting`);
    expect((await pair(['--revoke', 'dana'])).out).toBe('dana may no longer DM the agents.\n');
    expect((await pair(['--list'])).out).toContain('Nobody is paired.');
  });

  it('says how to use it when given nothing', async () => {
    const used = await pair([]);
    expect(used.code).toBe(2);
    expect(used.err).toContain('usage: npm run pair -- <code>');
  });
});
