import type pg from 'pg';
import type { AccessPort, PairedPerson } from '../access-port.js';
import { pairedPerson, pairingCode } from '../sqlite/access.js';
import { rows, run, statement, transaction } from './pool.js';
import { writeError } from './write-errors.js';

const Q = {
  expire: statement('access-expire', 'DELETE FROM access_codes WHERE expires_at <= $1'),
  lock: statement('access-lock', 'SELECT pg_advisory_xact_lock(hashtext($1))'),
  mine: statement('access-mine', 'SELECT * FROM access_codes WHERE platform = $1 AND user_id = $2'),
  pending: statement('access-pending', 'SELECT count(*)::int AS n FROM access_codes WHERE platform = $1'),
  add: statement(
    'access-add',
    'INSERT INTO access_codes (code, platform, user_id, name, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
  ),
  take: statement('access-take', 'DELETE FROM access_codes WHERE code = $1 AND expires_at > $2 RETURNING *'),
  pair: statement(
    'access-pair',
    `INSERT INTO access_paired (platform, user_id, name, approved_by, approved_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (platform, user_id) DO UPDATE SET name = excluded.name, approved_by = excluded.approved_by,
       approved_at = excluded.approved_at`,
  ),
  paired: statement('access-paired', 'SELECT 1 AS one FROM access_paired WHERE platform = $1 AND user_id = $2'),
  unpair: statement(
    'access-unpair',
    'DELETE FROM access_paired WHERE ($1::text IS NULL OR platform = $1) AND (user_id = $2 OR lower(name) = lower($2))',
  ),
  uncode: statement(
    'access-uncode',
    'DELETE FROM access_codes WHERE ($1::text IS NULL OR platform = $1) AND (user_id = $2 OR lower(name) = lower($2))',
  ),
  allPaired: statement('access-all-paired', 'SELECT * FROM access_paired ORDER BY platform, lower(name)'),
  allCodes: statement('access-all-codes', 'SELECT * FROM access_codes WHERE expires_at > $1 ORDER BY created_at'),
};

type Row = Parameters<typeof pairingCode>[0];
type PairedRow = Parameters<typeof pairedPerson>[0];

/** DM pairing in Postgres (migrations/postgres/019_access.sql); bridges sharing the store see one list. */
export class PostgresAccess implements AccessPort {
  constructor(private readonly pool: pg.Pool) {}

  async requestCode(r: Parameters<AccessPort['requestCode']>[0]): ReturnType<AccessPort['requestCode']> {
    try {
      return await transaction(this.pool, async (tx) => {
        // One platform's codes are counted and added by one bridge at a time (the bound holds across replicas).
        await rows(tx, Q.lock, [`access:${r.platform}`]);
        await run(tx, Q.expire, [r.now]);
        const [mine] = await rows<Row>(tx, Q.mine, [r.platform, r.userId]);
        if (mine) return { code: mine.code, fresh: false };
        const [count] = await rows<{ n: number }>(tx, Q.pending, [r.platform]);
        if ((count?.n ?? 0) >= r.maxPending) return 'full' as const;
        await run(tx, Q.add, [r.code, r.platform, r.userId, r.name, r.now, r.expiresAt]);
        return { code: r.code, fresh: true };
      });
    } catch (error) {
      throw writeError(error);
    }
  }

  async approve(code: string, by: string, now: number): Promise<PairedPerson | undefined> {
    try {
      return await transaction(this.pool, async (tx) => {
        const [row] = await rows<Row>(tx, Q.take, [code, now]);
        if (!row) return undefined;
        await run(tx, Q.pair, [row.platform, row.user_id, row.name, by, now]);
        return { platform: row.platform, userId: row.user_id, name: row.name, approvedBy: by, approvedAt: now };
      });
    } catch (error) {
      throw writeError(error);
    }
  }

  async paired(platform: string, userId: string): Promise<boolean> {
    return (await rows(this.pool, Q.paired, [platform, userId])).length > 0;
  }

  async revoke(platform: string | undefined, who: string): Promise<number> {
    return transaction(this.pool, async (tx) => {
      await run(tx, Q.uncode, [platform ?? null, who]);
      return run(tx, Q.unpair, [platform ?? null, who]);
    });
  }

  async list(now: number) {
    const paired = await rows<PairedRow>(this.pool, Q.allPaired);
    const pending = await rows<Row>(this.pool, Q.allCodes, [now]);
    return { paired: paired.map(pairedPerson), pending: pending.map(pairingCode) };
  }
}
