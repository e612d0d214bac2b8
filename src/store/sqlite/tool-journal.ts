import type Database from 'better-sqlite3';
import type { ToolJournal, ToolRunRecord } from '../port.js';

/** Tool calls of each ask (by room key and ask id): a turn taken again after a restart is answered from here. */
export class SqliteToolJournal implements ToolJournal {
  private readonly q;
  constructor(db: Database.Database) {
    this.q = {
      started: db.prepare(
        "INSERT INTO tool_runs (room, ask, tool, args, status, started_at, input) VALUES (?, ?, ?, ?, 'started', ?, ?)",
      ),
      ended: db.prepare('UPDATE tool_runs SET status = ?, input = ?, output = ? WHERE id = ?'),
      runs: db.prepare<[string, number], ToolRunRecord>(
        'SELECT id, tool, args, status, input, output FROM tool_runs WHERE room = ? AND ask = ? ORDER BY id',
      ),
    };
  }

  async runs(room: string, ask: number): Promise<ToolRunRecord[]> {
    return this.q.runs.all(room, ask);
  }

  async started(room: string, ask: number, tool: string, args: string, at: number, input: string): Promise<number> {
    return Number(this.q.started.run(room, ask, tool, args, at, input).lastInsertRowid);
  }

  async ended(
    id: number,
    result: { status: 'ok' | 'refused' | 'failed'; input: string; output: string },
  ): Promise<void> {
    this.q.ended.run(result.status, result.input, result.output, id);
  }
}
