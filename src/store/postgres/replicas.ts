/**
 * The registry of the bridges sharing this database (replicas): each writes its row at start and marks it seen with
 * every renewal of its leases. Seen and started are counted by the database's clock, as leases are, so the replicas'
 * clocks do not enter into which of them are live.
 */
import type pg from 'pg';
import type { ReplicaInfo, ReplicaPort, ReplicaRecord } from '../port.js';
import { NOW_MS } from './leases.js';
import { rows, run, statement } from './pool.js';

/** A row not seen for a day is forgotten when a replica starts (its holds are settled whether it has a row or not). */
const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;

const Q = {
  join: statement(
    'replica-join',
    `INSERT INTO replicas (id, host, engine, workspaces, started_at, seen_at)
     VALUES ($1, $2, $3, $4, ${NOW_MS}, ${NOW_MS})
     ON CONFLICT (id) DO UPDATE SET host = excluded.host, engine = excluded.engine, workspaces = excluded.workspaces,
       started_at = excluded.started_at, seen_at = excluded.seen_at`,
  ),
  forget: statement('replica-forget', `DELETE FROM replicas WHERE seen_at < ${NOW_MS} - $1`),
  beat: statement(
    'replica-beat',
    `INSERT INTO replicas (id, host, engine, workspaces, started_at, seen_at)
     VALUES ($1, $2, $3, $4, ${NOW_MS}, ${NOW_MS})
     ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`,
  ),
  live: statement(
    'replica-live',
    `SELECT id, host, engine, workspaces, started_at, seen_at FROM replicas WHERE seen_at > ${NOW_MS} - $1 ORDER BY id`,
  ),
  leave: statement('replica-leave', 'DELETE FROM replicas WHERE id = $1'),
};

interface ReplicaDb {
  id: string;
  host: string;
  engine: string | null;
  workspaces: string;
  started_at: number;
  seen_at: number;
}

const info = (r: ReplicaInfo) => [r.id, r.host, r.engine, r.workspaces];

export class PostgresReplicas implements ReplicaPort {
  constructor(private readonly pool: pg.Pool) {}

  async join(replica: ReplicaInfo): Promise<void> {
    await run(this.pool, Q.forget, [FORGET_AFTER_MS]);
    await run(this.pool, Q.join, info(replica));
  }

  async beat(replica: ReplicaInfo): Promise<void> {
    await run(this.pool, Q.beat, info(replica));
  }

  async live(liveMs: number): Promise<ReplicaRecord[]> {
    const found = await rows<ReplicaDb>(this.pool, Q.live, [liveMs]);
    return found.map((r) => ({
      id: r.id,
      host: r.host,
      engine: r.engine,
      workspaces: r.workspaces,
      startedAt: r.started_at,
      seenAt: r.seen_at,
    }));
  }

  async leave(id: string): Promise<void> {
    await run(this.pool, Q.leave, [id]);
  }
}
