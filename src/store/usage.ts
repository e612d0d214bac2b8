import type Database from 'better-sqlite3';

/** Token counts of one agent's calls (in one room, or in all). */
export interface UsageRow {
  readonly agent: string;
  readonly calls: number;
  readonly input: number;
  readonly cached: number;
  readonly output: number;
}

/** Tokens used per agent and room, summed as calls come in. */
export class UsageStore {
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

  add(agent: string, room: string, usage: { input: number; cached: number; output: number }): void {
    this.q.add.run(agent, room, usage.input, Math.min(usage.cached, usage.input), usage.output);
  }

  inRoom(room: string): UsageRow[] {
    return this.q.room.all(room);
  }

  total(): UsageRow[] {
    return this.q.total.all();
  }
}
