import type pg from 'pg';
import type { McpToken, PeoplePort, WebIdentity, WebPerson } from '../port.js';
import { rows, run, statement, transaction } from './pool.js';
import { writeError } from './write-errors.js';

interface IdentityDb {
  name: string;
  operator: number;
}

const identity = (row: IdentityDb): WebIdentity => ({ name: row.name, operator: row.operator === 1 });

// Names compare without regard to case: the columns' collation (roundtable_nocase, migration 011) says so.
const Q = {
  person: statement(
    'people-person',
    `INSERT INTO web_people (name, operator, created_at) VALUES ($1, $2, $3)
     ON CONFLICT (name) DO UPDATE SET operator = excluded.operator`,
  ),
  invite: statement(
    'people-invite',
    'INSERT INTO web_invites (code_hash, name, created_at, expires_at) VALUES ($1, $2, $3, $4)',
  ),
  invited: statement(
    'people-invited',
    `SELECT p.name, p.operator FROM web_invites i JOIN web_people p ON p.name = i.name
     WHERE i.code_hash = $1 AND i.used_at IS NULL AND i.expires_at > $2`,
  ),
  // Taken once: of two redeeming one code at once, one finds it used.
  use: statement(
    'people-use',
    `UPDATE web_invites i SET used_at = $2 FROM web_people p
     WHERE i.code_hash = $1 AND i.used_at IS NULL AND i.expires_at > $2 AND p.name = i.name
     RETURNING p.name, p.operator`,
  ),
  openSession: statement(
    'people-open-session',
    'INSERT INTO web_sessions (token_hash, name, created_at, expires_at, seen_at) VALUES ($1, $2, $3, $4, $5)',
  ),
  session: statement(
    'people-session',
    `SELECT p.name, p.operator FROM web_sessions s JOIN web_people p ON p.name = s.name
     WHERE s.token_hash = $1 AND s.expires_at > $2 AND s.seen_at >= $3`,
  ),
  // At most one write a minute per session, however often it is checked.
  seen: statement('people-seen', 'UPDATE web_sessions SET seen_at = $1 WHERE token_hash = $2 AND seen_at < $3'),
  endSession: statement('people-end-session', 'DELETE FROM web_sessions WHERE token_hash = $1'),
  endSessionsOf: statement('people-end-sessions-of', 'DELETE FROM web_sessions WHERE name = $1'),
  dropCodesOf: statement('people-drop-codes-of', 'DELETE FROM web_invites WHERE name = $1 AND used_at IS NULL'),
  addToken: statement(
    'people-add-token',
    `INSERT INTO mcp_tokens (id, secret_hash, name, created_at)
     SELECT $1, $2, name, $3 FROM web_people WHERE name = $4`,
  ),
  token: statement(
    'people-token',
    'SELECT t.secret_hash, p.name, p.operator FROM mcp_tokens t JOIN web_people p ON p.name = t.name WHERE t.id = $1',
  ),
  tokenUsed: statement(
    'people-token-used',
    'UPDATE mcp_tokens SET used_at = $1 WHERE id = $2 AND (used_at IS NULL OR used_at < $3)',
  ),
  dropTokensOf: statement('people-drop-tokens-of', 'DELETE FROM mcp_tokens WHERE name = $1'),
  list: statement(
    'people-list',
    `SELECT p.name, p.operator, p.created_at,
       (SELECT count(*) FROM web_sessions s WHERE s.name = p.name AND s.expires_at > $1) AS sessions,
       (SELECT max(seen_at) FROM web_sessions s WHERE s.name = p.name) AS seen
     FROM web_people p ORDER BY lower(p.name), p.name`,
  ),
};

/** The web room's people, sign-in codes and sessions in Postgres (digests only; see migrations/011_web_room.sql). */
export class PostgresPeople implements PeoplePort {
  constructor(private readonly pool: pg.Pool) {}

  async invite(person: WebIdentity, codeHash: string, now: number, expiresAt: number): Promise<void> {
    try {
      await transaction(this.pool, async (tx) => {
        await run(tx, Q.person, [person.name, person.operator ? 1 : 0, now]);
        await run(tx, Q.invite, [codeHash, person.name, now, expiresAt]);
      });
    } catch (error) {
      throw writeError(error);
    }
  }

  async invited(codeHash: string, now: number): Promise<WebIdentity | undefined> {
    const [row] = await rows<IdentityDb>(this.pool, Q.invited, [codeHash, now]);
    return row ? identity(row) : undefined;
  }

  async redeem(codeHash: string, tokenHash: string, now: number, expiresAt: number): Promise<WebIdentity | undefined> {
    try {
      const row = await transaction(this.pool, async (tx) => {
        const [who] = await rows<IdentityDb>(tx, Q.use, [codeHash, now]);
        if (!who) return undefined;
        await run(tx, Q.openSession, [tokenHash, who.name, now, expiresAt, now]);
        return who;
      });
      return row ? identity(row) : undefined;
    } catch (error) {
      throw writeError(error);
    }
  }

  async session(tokenHash: string, now: number, idleSince = 0): Promise<WebIdentity | undefined> {
    const [row] = await rows<IdentityDb>(this.pool, Q.session, [tokenHash, now, idleSince]);
    if (!row) return undefined;
    await run(this.pool, Q.seen, [now, tokenHash, now - 60_000]);
    return identity(row);
  }

  async endSession(tokenHash: string): Promise<void> {
    await run(this.pool, Q.endSession, [tokenHash]);
  }

  async revoke(name: string): Promise<number> {
    return transaction(this.pool, async (tx) => {
      await run(tx, Q.dropCodesOf, [name]);
      await run(tx, Q.dropTokensOf, [name]);
      return run(tx, Q.endSessionsOf, [name]);
    });
  }

  async addToken(name: string, id: string, secretHash: string, now: number): Promise<boolean> {
    try {
      return (await run(this.pool, Q.addToken, [id, secretHash, now, name])) === 1;
    } catch (error) {
      throw writeError(error);
    }
  }

  async token(id: string, now: number): Promise<McpToken | undefined> {
    const [row] = await rows<IdentityDb & { secret_hash: string }>(this.pool, Q.token, [id]);
    if (!row) return undefined;
    await run(this.pool, Q.tokenUsed, [now, id, now - 60_000]);
    return { secretHash: row.secret_hash, person: identity(row) };
  }

  async revokeTokens(name: string): Promise<number> {
    return run(this.pool, Q.dropTokensOf, [name]);
  }

  async list(now: number): Promise<WebPerson[]> {
    const found = await rows<{
      name: string;
      operator: number;
      created_at: number;
      sessions: number;
      seen: number | null;
    }>(this.pool, Q.list, [now]);
    return found.map((row) => ({
      name: row.name,
      operator: row.operator === 1,
      createdAt: row.created_at,
      sessions: row.sessions,
      ...(row.seen !== null ? { seenAt: row.seen } : {}),
    }));
  }
}
