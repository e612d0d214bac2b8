import type pg from 'pg';
import type { ToolJournal, ToolRunRecord } from '../port.js';
import { rows, run, statement } from './pool.js';

const Q = {
  started: statement(
    'tool-started',
    `INSERT INTO tool_runs (room, ask, tool, args, status, started_at, input) VALUES ($1, $2, $3, $4, 'started', $5, $6)
     RETURNING id`,
  ),
  ended: statement('tool-ended', 'UPDATE tool_runs SET status = $1, input = $2, output = $3 WHERE id = $4'),
  runs: statement(
    'tool-runs',
    'SELECT id, tool, args, status, input, output FROM tool_runs WHERE room = $1 AND ask = $2 ORDER BY id',
  ),
};

/** Tool calls of each ask (by room key and ask id): a turn taken again after a restart is answered from here. */
export class PostgresToolJournal implements ToolJournal {
  constructor(private readonly pool: pg.Pool) {}

  async runs(room: string, ask: number): Promise<ToolRunRecord[]> {
    return rows<ToolRunRecord>(this.pool, Q.runs, [room, ask]);
  }

  async started(room: string, ask: number, tool: string, args: string, at: number, input: string): Promise<number> {
    const [row] = await rows<{ id: number }>(this.pool, Q.started, [room, ask, tool, args, at, input]);
    if (!row) throw new Error(`the tool run of ${tool} was not stored`);
    return row.id;
  }

  async ended(
    id: number,
    result: { status: 'ok' | 'refused' | 'failed'; input: string; output: string },
  ): Promise<void> {
    await run(this.pool, Q.ended, [result.status, result.input, result.output, id]);
  }
}
