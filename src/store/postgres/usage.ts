import type pg from 'pg';
import type { UsagePort, UsageRow } from '../port.js';
import { rows, run, statement } from './pool.js';

const Q = {
  add: statement(
    'usage-add',
    `INSERT INTO token_usage (agent, room, calls, input, cached, output) VALUES ($1, $2, 1, $3, $4, $5)
     ON CONFLICT (agent, room) DO UPDATE SET calls = token_usage.calls + 1, input = token_usage.input + excluded.input,
       cached = token_usage.cached + excluded.cached, output = token_usage.output + excluded.output`,
  ),
  room: statement(
    'usage-room',
    'SELECT agent, calls, input, cached, output FROM token_usage WHERE room = $1 ORDER BY agent',
  ),
  // A sum of bigints is numeric: cast back, so it reads as a number.
  total: statement(
    'usage-total',
    `SELECT agent, sum(calls)::bigint AS calls, sum(input)::bigint AS input, sum(cached)::bigint AS cached,
       sum(output)::bigint AS output
     FROM token_usage GROUP BY agent ORDER BY agent`,
  ),
};

/** Tokens used per agent and room, summed as calls come in. */
export class PostgresUsage implements UsagePort {
  constructor(private readonly pool: pg.Pool) {}

  /** Cached never exceeds input, whatever a server reports. */
  async add(agent: string, room: string, usage: { input: number; cached: number; output: number }): Promise<void> {
    await run(this.pool, Q.add, [agent, room, usage.input, Math.min(usage.cached, usage.input), usage.output]);
  }

  async inRoom(room: string): Promise<UsageRow[]> {
    return rows<UsageRow>(this.pool, Q.room, [room]);
  }

  async total(): Promise<UsageRow[]> {
    return rows<UsageRow>(this.pool, Q.total);
  }
}
