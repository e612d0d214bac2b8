import type Database from 'better-sqlite3';
import type { AccessPort, PairedPerson, PairingCode } from '../access-port.js';

type CodeRequest = Parameters<AccessPort['requestCode']>[0];

interface CodeDb {
  code: string;
  platform: string;
  user_id: string;
  name: string;
  created_at: number;
  expires_at: number;
}
interface PairedDb {
  platform: string;
  user_id: string;
  name: string;
  approved_by: string;
  approved_at: number;
}

export const pairingCode = (row: CodeDb): PairingCode => ({
  code: row.code,
  platform: row.platform,
  userId: row.user_id,
  name: row.name,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
});
export const pairedPerson = (row: PairedDb): PairedPerson => ({
  platform: row.platform,
  userId: row.user_id,
  name: row.name,
  approvedBy: row.approved_by,
  approvedAt: Number(row.approved_at),
});

/** DM pairing in SQLite (migrations/019_access.sql). */
export class SqliteAccess implements AccessPort {
  private readonly q;
  private readonly request: (r: CodeRequest) => Awaited<ReturnType<AccessPort['requestCode']>>;
  private readonly take: (code: string, by: string, now: number) => PairedPerson | undefined;
  private readonly drop: (platform: string | undefined, who: string) => number;

  constructor(db: Database.Database) {
    const q = {
      expire: db.prepare('DELETE FROM access_codes WHERE expires_at <= ?'),
      mine: db.prepare<[string, string], CodeDb>('SELECT * FROM access_codes WHERE platform = ? AND user_id = ?'),
      pending: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM access_codes WHERE platform = ?'),
      add: db.prepare(
        'INSERT INTO access_codes (code, platform, user_id, name, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      code: db.prepare<[string, number], CodeDb>('SELECT * FROM access_codes WHERE code = ? AND expires_at > ?'),
      dropCode: db.prepare('DELETE FROM access_codes WHERE code = ?'),
      pair: db.prepare(
        `INSERT INTO access_paired (platform, user_id, name, approved_by, approved_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (platform, user_id) DO UPDATE SET name = excluded.name, approved_by = excluded.approved_by,
           approved_at = excluded.approved_at`,
      ),
      paired: db.prepare<[string, string], { one: number }>(
        'SELECT 1 AS one FROM access_paired WHERE platform = ? AND user_id = ?',
      ),
      unpair: db.prepare(
        `DELETE FROM access_paired WHERE (? IS NULL OR platform = ?) AND (user_id = ? OR lower(name) = lower(?))`,
      ),
      uncode: db.prepare(
        `DELETE FROM access_codes WHERE (? IS NULL OR platform = ?) AND (user_id = ? OR lower(name) = lower(?))`,
      ),
      allPaired: db.prepare<[], PairedDb>('SELECT * FROM access_paired ORDER BY platform, lower(name)'),
      allCodes: db.prepare<[number], CodeDb>('SELECT * FROM access_codes WHERE expires_at > ? ORDER BY created_at'),
    };
    this.q = q;
    this.request = db.transaction((r: CodeRequest) => {
      q.expire.run(r.now);
      const mine = q.mine.get(r.platform, r.userId);
      if (mine) return { code: mine.code, fresh: false };
      if ((q.pending.get(r.platform)?.n ?? 0) >= r.maxPending) return 'full' as const;
      q.add.run(r.code, r.platform, r.userId, r.name, r.now, r.expiresAt);
      return { code: r.code, fresh: true };
    });
    this.take = db.transaction((code: string, by: string, now: number) => {
      const row = q.code.get(code, now);
      if (!row) return undefined;
      q.dropCode.run(code);
      q.pair.run(row.platform, row.user_id, row.name, by, now);
      return { platform: row.platform, userId: row.user_id, name: row.name, approvedBy: by, approvedAt: now };
    });
    this.drop = db.transaction((platform: string | undefined, who: string) => {
      const p = platform ?? null;
      q.uncode.run(p, p, who, who);
      return q.unpair.run(p, p, who, who).changes;
    });
  }

  async requestCode(request: CodeRequest) {
    return this.request(request);
  }

  async approve(code: string, by: string, now: number): Promise<PairedPerson | undefined> {
    return this.take(code, by, now);
  }

  async paired(platform: string, userId: string): Promise<boolean> {
    return this.q.paired.get(platform, userId) !== undefined;
  }

  async revoke(platform: string | undefined, who: string): Promise<number> {
    return this.drop(platform, who);
  }

  async list(now: number) {
    return { paired: this.q.allPaired.all().map(pairedPerson), pending: this.q.allCodes.all(now).map(pairingCode) };
  }
}
