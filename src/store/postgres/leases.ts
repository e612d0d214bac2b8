/**
 * Room leases on Postgres: which of several bridges sharing the database (replicas) serves a room. A lease is held
 * for a time by the database's clock (replicas' clocks do not enter into it), renewed well before it ends, and
 * carries a fencing token that grows every time the room changes hands; `PostgresRooms.commit` refuses a decision
 * whose token is not the room's current one (see `Fence`), so a replica that lost a room while paused or cut off
 * writes nothing more for it.
 */
import type pg from 'pg';
import type { Lease, LeasePort } from '../port.js';
import { rows, statement } from './pool.js';
import { writeError } from './write-errors.js';

/** The database's clock in ms since the epoch (clock_timestamp: the time of the statement, not of its transaction). */
export const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

const Q = {
  // Taken when free, expired or already ours while live; a change of hands (or a lapse) gives a new token.
  acquire: statement(
    'lease-acquire',
    `INSERT INTO room_leases AS l (room_id, holder, token, expires_at) VALUES ($1, $2, 1, ${NOW_MS} + $3)
     ON CONFLICT (room_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
       token = CASE WHEN l.holder = excluded.holder AND l.expires_at > ${NOW_MS} THEN l.token ELSE l.token + 1 END
     WHERE l.expires_at <= ${NOW_MS} OR l.holder = excluded.holder
     RETURNING room_id, token, expires_at`,
  ),
  // Only live leases with the token the holder knows are renewed: a lapsed one must be taken again (new token).
  renew: statement(
    'lease-renew',
    `UPDATE room_leases SET expires_at = ${NOW_MS} + $3
     WHERE holder = $1 AND room_id = ANY($2::bigint[]) AND expires_at > ${NOW_MS}
     RETURNING room_id, token, expires_at`,
  ),
  // A released lease is set to expire at the moment of release; one that lapsed ran out unrenewed. Both are past,
  // but a release also empties the holder: so a lapse is a room whose holder is still named.
  lapsed: statement(
    'lease-lapsed',
    `SELECT room_id FROM room_leases WHERE holder <> '' AND expires_at <= ${NOW_MS} ORDER BY room_id`,
  ),
  // Expired at once, never deleted: the next holder's token must be larger than every one given before.
  release: statement(
    'lease-release',
    `UPDATE room_leases SET expires_at = ${NOW_MS}, holder = '' WHERE holder = $1 AND room_id = ANY($2::bigint[])
       AND expires_at > ${NOW_MS} RETURNING room_id`,
  ),
  // Ended now, its holder still named: it shows among the lapsed rooms, for another bridge to take up.
  handOver: statement(
    'lease-hand-over',
    `UPDATE room_leases SET expires_at = ${NOW_MS} WHERE holder = $1 AND room_id = ANY($2::bigint[])
       AND expires_at > ${NOW_MS} RETURNING room_id`,
  ),
  releaseAll: statement(
    'lease-release-all',
    `UPDATE room_leases SET expires_at = ${NOW_MS}, holder = '' WHERE holder = $1 AND expires_at > ${NOW_MS}
     RETURNING room_id`,
  ),
  holders: statement(
    'lease-holders',
    `SELECT room_id, holder, token, expires_at FROM room_leases WHERE expires_at > ${NOW_MS} ORDER BY room_id`,
  ),
};

interface LeaseDb {
  room_id: number;
  token: number;
  expires_at: number;
}

const lease = (row: LeaseDb): Lease => ({ roomId: row.room_id, token: row.token, expiresAt: row.expires_at });

export class PostgresLeases implements LeasePort {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * Takes (or keeps) a room for `holder` for `ttlMs`; undefined while another holder's lease is live. A failure is a
   * StoreError (retryable while the database is away: the room's events are held and it is taken again).
   */
  async acquire(roomId: number, holder: string, ttlMs: number): Promise<Lease | undefined> {
    let row: LeaseDb | undefined;
    try {
      [row] = await rows<LeaseDb>(this.pool, Q.acquire, [roomId, holder, ttlMs]);
    } catch (error) {
      throw writeError(error);
    }
    return row ? lease(row) : undefined;
  }

  /** Extends `holder`'s live leases on these rooms by `ttlMs`; resolves with those it still holds. */
  async renew(holder: string, roomIds: readonly number[], ttlMs: number): Promise<Lease[]> {
    if (roomIds.length === 0) return [];
    return (await rows<LeaseDb>(this.pool, Q.renew, [holder, roomIds, ttlMs])).map(lease);
  }

  /** Ends `holder`'s leases at once (these rooms, or all of them): another replica may take them now. */
  async release(holder: string, roomIds?: readonly number[]): Promise<number[]> {
    const found =
      roomIds === undefined
        ? await rows<{ room_id: number }>(this.pool, Q.releaseAll, [holder])
        : await rows<{ room_id: number }>(this.pool, Q.release, [holder, roomIds]);
    return found.map((row) => row.room_id);
  }

  async handOver(holder: string, roomIds: readonly number[]): Promise<number[]> {
    if (roomIds.length === 0) return [];
    return (await rows<{ room_id: number }>(this.pool, Q.handOver, [holder, roomIds])).map((row) => row.room_id);
  }

  async lapsed(): Promise<number[]> {
    return (await rows<{ room_id: number }>(this.pool, Q.lapsed)).map((row) => row.room_id);
  }

  /** Every live lease: which replica serves which room (for /status and the metrics). */
  async holders(): Promise<Array<Lease & { holder: string }>> {
    const found = await rows<LeaseDb & { holder: string }>(this.pool, Q.holders);
    return found.map((row) => ({ ...lease(row), holder: row.holder }));
  }
}
