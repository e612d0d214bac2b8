/**
 * `--check` with DATABASE_URL set: the database answers, its schema is this code's or one start can bring up to date,
 * and its clock agrees with this machine's. Reads only: nothing is created or migrated.
 */
import pg from 'pg';
import { redactUrl } from '../../secrets.js';
import type { CheckResult } from '../../self-check.js';
import { pendingMigrations } from '../migrations.js';
import { appliedVersions, postgresMigrations } from './migrate.js';
import { unreachable } from './pool.js';

/** How far the database's clock may be from this machine's. */
export const MAX_CLOCK_SKEW_MS = 5000;

export async function checkPostgres(
  url: string,
  options: { clock?: () => number; timeoutMs?: number } = {},
): Promise<CheckResult[]> {
  const clock = options.clock ?? Date.now;
  const where = redactUrl(url);
  const client = new pg.Client({
    connectionString: url,
    application_name: 'roundtable --check',
    connectionTimeoutMillis: options.timeoutMs ?? 10_000,
  });
  // An error after connecting (the server going away) rejects the query under way; this keeps it from the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    return [{ ok: false, item: 'database', detail: unreachable(url, error).message }];
  }
  try {
    const version = await client.query<{ version: string }>("SELECT current_setting('server_version') AS version");
    const results: CheckResult[] = [
      { ok: true, item: 'database', detail: `${where} answers (PostgreSQL ${version.rows[0]?.version ?? '?'})` },
    ];
    results.push(schemaLine(await appliedVersions(client)));
    const before = clock();
    const now = await client.query<{ now: number }>(
      'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now',
    );
    const after = clock();
    results.push(clockLine((now.rows[0]?.now ?? Number.NaN) - (before + after) / 2, (after - before) / 2));
    return results;
  } catch (error) {
    return [{ ok: false, item: 'database', detail: unreachable(url, error).message }];
  } finally {
    await client.end().catch(() => undefined);
  }
}

function schemaLine(applied: ReadonlySet<number>): CheckResult {
  const migrations = postgresMigrations();
  const newest = migrations.at(-1)?.version ?? 0;
  let pending: number[];
  try {
    pending = pendingMigrations(migrations, applied).map((m) => m.version);
  } catch (error) {
    return { ok: false, item: 'database schema', detail: error instanceof Error ? error.message : String(error) };
  }
  if (applied.size === 0) {
    return { ok: true, item: 'database schema', detail: `empty: start creates the schema (version ${newest})` };
  }
  const at = Math.max(...applied);
  if (pending.length === 0) return { ok: true, item: 'database schema', detail: `at version ${at}, up to date` };
  return {
    ok: true,
    item: 'database schema',
    detail: `at version ${at}: start applies ${pending.map((v) => String(v).padStart(3, '0')).join(', ')}`,
  };
}

/** `skew`: the database's time less this machine's at the moment it answered, give or take `margin`. */
function clockLine(skew: number, margin: number): CheckResult {
  const seconds = (ms: number) => `${(Math.abs(ms) / 1000).toFixed(1)} s`;
  if (Number.isFinite(skew) && Math.abs(skew) <= MAX_CLOCK_SKEW_MS + margin) {
    return { ok: true, item: 'database clock', detail: `within ${seconds(skew)} of this machine's` };
  }
  const way = skew > 0 ? 'ahead of' : 'behind';
  return {
    ok: false,
    item: 'database clock',
    detail: `${seconds(skew)} ${way} this machine's (at most ${MAX_CLOCK_SKEW_MS / 1000} s): keep both clocks in sync (NTP)`,
  };
}
