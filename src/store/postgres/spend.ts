import type pg from 'pg';
import type { AbandonedHolds, ReserveResult, SpendPort, SpendRow, SpendScope } from '../port.js';
import { NOW_MS } from './leases.js';
import { rows, run, type Sql, statement, transaction } from './pool.js';
import { writeError } from './write-errors.js';

/** The advisory lock reservations take turns under (an arbitrary constant: "RTspend"). */
const SPEND_LOCK = '23181810669872740';

const Q = {
  lock: statement('spend-lock', 'SELECT pg_advisory_xact_lock($1::bigint)'),
  used: statement('spend-used', 'SELECT spent + reserved AS used FROM spend WHERE day = $1 AND scope = $2'),
  hold: statement(
    'spend-hold',
    `INSERT INTO spend (day, scope, reserved) VALUES ($1, $2, $3)
     ON CONFLICT (day, scope) DO UPDATE SET reserved = spend.reserved + excluded.reserved`,
  ),
  move: statement(
    'spend-move',
    'UPDATE spend SET reserved = greatest(0, reserved - $1), spent = spent + $2 WHERE day = $3 AND scope = $4',
  ),
  addHold: statement(
    'spend-add-hold',
    'INSERT INTO spend_holds (id, day, scopes, created_at, replica) VALUES ($1, $2, $3, $4, $5)',
  ),
  // Taken as it is dropped: a hold is settled once, however many try.
  takeHold: statement('spend-take-hold', 'DELETE FROM spend_holds WHERE id = $1 RETURNING id, day, scopes'),
  takeHolds: statement('spend-take-holds', 'DELETE FROM spend_holds RETURNING id, day, scopes, created_at'),
  // The holds of replicas not live (seen within $3, or never recorded), and $1's own when $2: one statement, so a
  // replica that records itself and holds after it began is never taken for dead.
  takeAbandoned: statement(
    'spend-take-abandoned',
    `DELETE FROM spend_holds AS h
     WHERE ($2::boolean AND h.replica = $1)
        OR (h.replica IS DISTINCT FROM $1 AND NOT EXISTS (
              SELECT 1 FROM replicas r WHERE r.id = h.replica AND r.seen_at > ${NOW_MS} - $3))
     RETURNING id, day, scopes`,
  ),
  day: statement('spend-day', 'SELECT scope, spent, reserved FROM spend WHERE day = $1 ORDER BY scope'),
  limits: statement('spend-limits', 'SELECT scope, limit_nano FROM spend_limits ORDER BY scope'),
  setLimit: statement(
    'spend-set-limit',
    `INSERT INTO spend_limits (scope, limit_nano, set_at) VALUES ($1, $2, $3)
     ON CONFLICT (scope) DO UPDATE SET limit_nano = excluded.limit_nano, set_at = excluded.set_at`,
  ),
  clearLimit: statement('spend-clear-limit', 'DELETE FROM spend_limits WHERE scope = $1'),
};

interface HoldRow {
  id: string;
  day: string;
  /** JSON [{ scope, amount }]. */
  scopes: string;
}

type Hold = Parameters<SpendPort['reserve']>[0];

/**
 * The day's spend per scope. A reservation is one transaction under an advisory lock, so two calls (of this bridge or
 * of another sharing the database) can never both take the last of a limit.
 */
export class PostgresSpend implements SpendPort {
  constructor(private readonly pool: pg.Pool) {}

  async reserve(hold: Hold): Promise<ReserveResult> {
    try {
      return await transaction(this.pool, async (tx): Promise<ReserveResult> => {
        await rows(tx, Q.lock, [SPEND_LOCK]);
        for (const { scope, limit, amount } of hold.scopes) {
          if (limit === null) continue;
          const [row] = await rows<{ used: number }>(tx, Q.used, [hold.day, scope]);
          const used = row?.used ?? 0;
          if (used + amount > limit) return { ok: false, scope, used, limit };
        }
        for (const { scope, amount } of hold.scopes) await run(tx, Q.hold, [hold.day, scope, amount]);
        const kept = hold.scopes.map(({ scope, amount }: SpendScope) => ({ scope, amount }));
        await run(tx, Q.addHold, [hold.id, hold.day, JSON.stringify(kept), hold.at, hold.replica ?? null]);
        return { ok: true };
      });
    } catch (error) {
      throw writeError(error);
    }
  }

  async settle(id: string, costs: ReadonlyMap<string, number> | null): Promise<void> {
    try {
      await transaction(this.pool, async (tx) => {
        for (const hold of await rows<HoldRow>(tx, Q.takeHold, [id])) await release(tx, hold, costs);
      });
    } catch (error) {
      throw writeError(error);
    }
  }

  async settleAbandoned(abandoned?: AbandonedHolds): Promise<number> {
    try {
      return await transaction(this.pool, async (tx) => {
        const holds = abandoned
          ? await rows<HoldRow>(tx, Q.takeAbandoned, [abandoned.replica, abandoned.own, abandoned.liveMs])
          : await rows<HoldRow>(tx, Q.takeHolds);
        for (const hold of holds) await release(tx, hold, null);
        return holds.length;
      });
    } catch (error) {
      throw writeError(error);
    }
  }

  async day(day: string): Promise<SpendRow[]> {
    return rows<SpendRow>(this.pool, Q.day, [day]);
  }

  async limits(): Promise<ReadonlyMap<string, number | null>> {
    const found = await rows<{ scope: string; limit_nano: number | null }>(this.pool, Q.limits);
    return new Map(found.map((row) => [row.scope, row.limit_nano]));
  }

  async setLimit(scope: string, limit: number | null): Promise<void> {
    await run(this.pool, Q.setLimit, [scope, limit, Date.now()]);
  }

  async clearLimit(scope: string): Promise<void> {
    await run(this.pool, Q.clearLimit, [scope]);
  }
}

/** A hold taken off its scopes: spent as `costs` say (null: whole). */
async function release(tx: Sql, hold: HoldRow, costs: ReadonlyMap<string, number> | null): Promise<void> {
  for (const { scope, amount } of JSON.parse(hold.scopes) as Array<{ scope: string; amount: number }>) {
    await run(tx, Q.move, [amount, costs === null ? amount : (costs.get(scope) ?? 0), hold.day, scope]);
  }
}
