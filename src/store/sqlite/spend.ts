import type Database from 'better-sqlite3';
import type { AbandonedHolds, ReserveResult, SpendPort, SpendRow, SpendScope } from '../port.js';

interface HoldRow {
  id: string;
  day: string;
  /** JSON [{ scope, amount }]. */
  scopes: string;
}

type Hold = Parameters<SpendPort['reserve']>[0];

/**
 * The day's spend per scope. A reservation is one transaction (better-sqlite3 runs it without interruption, and
 * SQLite's write lock keeps another process out), so two calls can never both take the last of a limit.
 */
export class SqliteSpend implements SpendPort {
  private readonly reserveTx: (hold: Hold) => ReserveResult;
  private readonly settleTx: (id: string, costs: ReadonlyMap<string, number> | null) => void;
  private readonly abandonTx: (abandoned?: AbandonedHolds) => number;
  private readonly q;

  constructor(db: Database.Database) {
    const q = {
      used: db.prepare<[string, string], { used: number }>(
        'SELECT spent + reserved AS used FROM spend WHERE day = ? AND scope = ?',
      ),
      hold: db.prepare(
        `INSERT INTO spend (day, scope, reserved) VALUES (?, ?, ?)
         ON CONFLICT (day, scope) DO UPDATE SET reserved = reserved + excluded.reserved`,
      ),
      move: db.prepare(
        'UPDATE spend SET reserved = max(0, reserved - ?), spent = spent + ? WHERE day = ? AND scope = ?',
      ),
      addHold: db.prepare('INSERT INTO spend_holds (id, day, scopes, created_at, replica) VALUES (?, ?, ?, ?, ?)'),
      getHold: db.prepare<[string], HoldRow>('SELECT id, day, scopes FROM spend_holds WHERE id = ?'),
      holds: db.prepare<[], HoldRow>('SELECT id, day, scopes FROM spend_holds ORDER BY created_at'),
      // As on Postgres (the registry is empty here unless a test fills it): replicas not seen since $seen, and $replica's
      // own when $own.
      abandoned: db.prepare<{ replica: string; own: number; seen: number }, HoldRow>(
        `SELECT id, day, scopes FROM spend_holds AS h
         WHERE (:own AND h.replica = :replica)
            OR (h.replica IS NOT :replica AND NOT EXISTS (
                  SELECT 1 FROM replicas r WHERE r.id = h.replica AND r.seen_at > :seen))
         ORDER BY created_at`,
      ),
      dropHold: db.prepare('DELETE FROM spend_holds WHERE id = ?'),
      day: db.prepare<[string], SpendRow>('SELECT scope, spent, reserved FROM spend WHERE day = ? ORDER BY scope'),
      limits: db.prepare<[], { scope: string; limit_nano: number | null }>(
        'SELECT scope, limit_nano FROM spend_limits ORDER BY scope',
      ),
      setLimit: db.prepare(
        `INSERT INTO spend_limits (scope, limit_nano, set_at) VALUES (?, ?, ?)
         ON CONFLICT (scope) DO UPDATE SET limit_nano = excluded.limit_nano, set_at = excluded.set_at`,
      ),
      clearLimit: db.prepare('DELETE FROM spend_limits WHERE scope = ?'),
    };
    this.q = q;

    this.reserveTx = db.transaction((hold: Hold): ReserveResult => {
      for (const { scope, limit, amount } of hold.scopes) {
        if (limit === null) continue;
        const used = q.used.get(hold.day, scope)?.used ?? 0;
        if (used + amount > limit) return { ok: false, scope, used, limit };
      }
      for (const { scope, amount } of hold.scopes) q.hold.run(hold.day, scope, amount);
      const kept = hold.scopes.map(({ scope, amount }: SpendScope) => ({ scope, amount }));
      q.addHold.run(hold.id, hold.day, JSON.stringify(kept), hold.at, hold.replica ?? null);
      return { ok: true };
    });
    const release = (hold: HoldRow, costs: ReadonlyMap<string, number> | null) => {
      for (const { scope, amount } of JSON.parse(hold.scopes) as Array<{ scope: string; amount: number }>) {
        q.move.run(amount, costs === null ? amount : (costs.get(scope) ?? 0), hold.day, scope);
      }
      q.dropHold.run(hold.id);
    };
    this.settleTx = db.transaction((id: string, costs: ReadonlyMap<string, number> | null) => {
      const hold = q.getHold.get(id);
      if (hold) release(hold, costs);
    });
    this.abandonTx = db.transaction((abandoned?: AbandonedHolds) => {
      const holds = abandoned
        ? q.abandoned.all({
            replica: abandoned.replica,
            own: abandoned.own ? 1 : 0,
            seen: Date.now() - abandoned.liveMs,
          })
        : q.holds.all();
      for (const hold of holds) release(hold, null);
      return holds.length;
    });
  }

  async reserve(hold: Hold): Promise<ReserveResult> {
    return this.reserveTx(hold);
  }

  async settle(id: string, costs: ReadonlyMap<string, number> | null): Promise<void> {
    this.settleTx(id, costs);
  }

  async settleAbandoned(abandoned?: AbandonedHolds): Promise<number> {
    return this.abandonTx(abandoned);
  }

  async day(day: string): Promise<SpendRow[]> {
    return this.q.day.all(day);
  }

  async limits(): Promise<ReadonlyMap<string, number | null>> {
    return new Map(this.q.limits.all().map((row) => [row.scope, row.limit_nano]));
  }

  async setLimit(scope: string, limit: number | null): Promise<void> {
    this.q.setLimit.run(scope, limit, Date.now());
  }

  async clearLimit(scope: string): Promise<void> {
    this.q.clearLimit.run(scope);
  }
}
