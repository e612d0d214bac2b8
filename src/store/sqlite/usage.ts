import type Database from 'better-sqlite3';
import type { UsagePort, UsageRow } from '../port.js';

/** Tokens used per agent and room, summed as calls come in. */
export class SqliteUsage implements UsagePort {
  private readonly q;
  constructor(db: Database.Database) {
    this.q = {
      add: db.prepare(
        `INSERT INTO token_usage (agent, room, calls, input, cached, output) VALUES (?, ?, 1, ?, ?, ?)
         ON CONFLICT (agent, room) DO UPDATE SET calls = calls + 1, input = input + excluded.input,
           cached = cached + excluded.cached, output = output + excluded.output`,
      ),
      room: db.prepare<[string], UsageRow>(
        'SELECT agent, calls, input, cached, output FROM token_usage WHERE room = ? ORDER BY agent',
      ),
      total: db.prepare<[], UsageRow>(
        `SELECT agent, SUM(calls) AS calls, SUM(input) AS input, SUM(cached) AS cached, SUM(output) AS output
         FROM token_usage GROUP BY agent ORDER BY agent`,
      ),
    };
  }

  /** Cached never exceeds input, whatever a server reports. */
  async add(agent: string, room: string, usage: { input: number; cached: number; output: number }): Promise<void> {
    this.q.add.run(agent, room, usage.input, Math.min(usage.cached, usage.input), usage.output);
  }

  async inRoom(room: string): Promise<UsageRow[]> {
    return this.q.room.all(room);
  }

  async total(): Promise<UsageRow[]> {
    return this.q.total.all();
  }
}
