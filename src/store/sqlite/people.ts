import type Database from 'better-sqlite3';
import type { McpToken, PeoplePort, WebIdentity, WebPerson } from '../port.js';

interface IdentityDb {
  name: string;
  operator: number;
}

const identity = (row: IdentityDb): WebIdentity => ({ name: row.name, operator: row.operator === 1 });

/** The web room's people, sign-in codes and sessions in SQLite (digests only; see migrations/011_web_room.sql). */
export class SqlitePeople implements PeoplePort {
  private readonly q;
  private readonly redeemCode: (
    codeHash: string,
    tokenHash: string,
    now: number,
    expiresAt: number,
  ) => IdentityDb | undefined;
  private readonly revokeAll: (name: string) => number;

  constructor(db: Database.Database) {
    const q = {
      person: db.prepare(
        `INSERT INTO web_people (name, operator, created_at) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET operator = excluded.operator`,
      ),
      invite: db.prepare('INSERT INTO web_invites (code_hash, name, created_at, expires_at) VALUES (?, ?, ?, ?)'),
      invited: db.prepare<[string, number], IdentityDb>(
        `SELECT p.name, p.operator FROM web_invites i JOIN web_people p ON p.name = i.name
         WHERE i.code_hash = ? AND i.used_at IS NULL AND i.expires_at > ?`,
      ),
      use: db.prepare('UPDATE web_invites SET used_at = ? WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?'),
      openSession: db.prepare(
        'INSERT INTO web_sessions (token_hash, name, created_at, expires_at, seen_at) VALUES (?, ?, ?, ?, ?)',
      ),
      session: db.prepare<[string, number, number], IdentityDb>(
        `SELECT p.name, p.operator FROM web_sessions s JOIN web_people p ON p.name = s.name
         WHERE s.token_hash = ? AND s.expires_at > ? AND s.seen_at >= ?`,
      ),
      // At most one write a minute per session, however often it is checked.
      seen: db.prepare('UPDATE web_sessions SET seen_at = ? WHERE token_hash = ? AND seen_at < ?'),
      endSession: db.prepare('DELETE FROM web_sessions WHERE token_hash = ?'),
      endSessionsOf: db.prepare('DELETE FROM web_sessions WHERE name = ?'),
      dropCodesOf: db.prepare('DELETE FROM web_invites WHERE name = ? AND used_at IS NULL'),
      addToken: db.prepare(
        `INSERT INTO mcp_tokens (id, secret_hash, name, created_at)
         SELECT ?, ?, name, ? FROM web_people WHERE name = ?`,
      ),
      token: db.prepare<[string], IdentityDb & { secret_hash: string }>(
        `SELECT t.secret_hash, p.name, p.operator FROM mcp_tokens t JOIN web_people p ON p.name = t.name WHERE t.id = ?`,
      ),
      tokenUsed: db.prepare('UPDATE mcp_tokens SET used_at = ? WHERE id = ? AND (used_at IS NULL OR used_at < ?)'),
      dropTokensOf: db.prepare('DELETE FROM mcp_tokens WHERE name = ?'),
      list: db.prepare<
        [number],
        { name: string; operator: number; created_at: number; sessions: number; seen: number | null }
      >(
        `SELECT p.name, p.operator, p.created_at,
           (SELECT count(*) FROM web_sessions s WHERE s.name = p.name AND s.expires_at > ?) AS sessions,
           (SELECT max(seen_at) FROM web_sessions s WHERE s.name = p.name) AS seen
         FROM web_people p ORDER BY p.name COLLATE NOCASE`,
      ),
    };
    this.q = q;
    this.redeemCode = db.transaction((codeHash: string, tokenHash: string, now: number, expiresAt: number) => {
      const who = q.invited.get(codeHash, now);
      if (!who || q.use.run(now, codeHash, now).changes === 0) return undefined;
      q.openSession.run(tokenHash, who.name, now, expiresAt, now);
      return who;
    });
    this.revokeAll = db.transaction((name: string) => {
      q.dropCodesOf.run(name);
      q.dropTokensOf.run(name);
      return q.endSessionsOf.run(name).changes;
    });
  }

  async invite(person: WebIdentity, codeHash: string, now: number, expiresAt: number): Promise<void> {
    this.q.person.run(person.name, person.operator ? 1 : 0, now);
    this.q.invite.run(codeHash, person.name, now, expiresAt);
  }

  async invited(codeHash: string, now: number): Promise<WebIdentity | undefined> {
    const row = this.q.invited.get(codeHash, now);
    return row ? identity(row) : undefined;
  }

  async redeem(codeHash: string, tokenHash: string, now: number, expiresAt: number): Promise<WebIdentity | undefined> {
    const row = this.redeemCode(codeHash, tokenHash, now, expiresAt);
    return row ? identity(row) : undefined;
  }

  async session(tokenHash: string, now: number, idleSince = 0): Promise<WebIdentity | undefined> {
    const row = this.q.session.get(tokenHash, now, idleSince);
    if (!row) return undefined;
    this.q.seen.run(now, tokenHash, now - 60_000);
    return identity(row);
  }

  async endSession(tokenHash: string): Promise<void> {
    this.q.endSession.run(tokenHash);
  }

  async revoke(name: string): Promise<number> {
    return this.revokeAll(name);
  }

  async addToken(name: string, id: string, secretHash: string, now: number): Promise<boolean> {
    return this.q.addToken.run(id, secretHash, now, name).changes === 1;
  }

  async token(id: string, now: number): Promise<McpToken | undefined> {
    const row = this.q.token.get(id);
    if (!row) return undefined;
    this.q.tokenUsed.run(now, id, now - 60_000);
    return { secretHash: row.secret_hash, person: identity(row) };
  }

  async revokeTokens(name: string): Promise<number> {
    return this.q.dropTokensOf.run(name).changes;
  }

  async list(now: number): Promise<WebPerson[]> {
    return this.q.list.all(now).map((row) => ({
      name: row.name,
      operator: row.operator === 1,
      createdAt: row.created_at,
      sessions: row.sessions,
      ...(row.seen !== null ? { seenAt: row.seen } : {}),
    }));
  }
}
