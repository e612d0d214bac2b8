import type Database from 'better-sqlite3';
import type { UsagePort, UsageRow } from '../port.js';

interface Pending {
  readonly agent: string;
  readonly room: string;
  calls: number;
  input: number;
  cached: number;
  output: number;
}

/**
 * Tokens used per agent and room, summed as calls come in. A call's usage is bookkeeping: it is written after the
 * turn has gone on (the next turn of the event loop), the calls of that moment summed and written in one transaction;
 * a read writes what waits first, so it sees every call added before it.
 */
export class SqliteUsage implements UsagePort {
  private readonly q;
  private readonly write: (rows: readonly Pending[]) => void;
  private readonly pending = new Map<string, Pending>();
  /** Settles once the usage waiting now is written (or could not be). */
  private written: { promise: Promise<void>; settle: (error?: unknown) => void } | undefined;

  constructor(private readonly db: Database.Database) {
    this.q = {
      add: db.prepare(
        `INSERT INTO token_usage (agent, room, calls, input, cached, output) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent, room) DO UPDATE SET calls = calls + excluded.calls, input = input + excluded.input,
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
    const write = db.transaction((rows: readonly Pending[]) => {
      for (const r of rows) this.q.add.run(r.agent, r.room, r.calls, r.input, r.cached, r.output);
    });
    this.write = (rows) => write.immediate(rows);
  }

  /** Cached never exceeds input, whatever a server reports. Resolves once written (rejects if it could not be). */
  add(agent: string, room: string, usage: { input: number; cached: number; output: number }): Promise<void> {
    const key = `${agent}\u0000${room}`;
    const row = this.pending.get(key) ?? { agent, room, calls: 0, input: 0, cached: 0, output: 0 };
    row.calls += 1;
    row.input += usage.input;
    row.cached += Math.min(usage.cached, usage.input);
    row.output += usage.output;
    this.pending.set(key, row);
    if (!this.written) {
      let settle: (error?: unknown) => void = () => {};
      const promise = new Promise<void>((resolve, reject) => {
        settle = (error) => (error === undefined ? resolve() : reject(error));
      });
      this.written = { promise, settle };
      setImmediate(() => this.flush());
    }
    return this.written.promise;
  }

  async inRoom(room: string): Promise<UsageRow[]> {
    this.flush();
    return this.q.room.all(room);
  }

  async total(): Promise<UsageRow[]> {
    this.flush();
    return this.q.total.all();
  }

  /** Writes what waits (once the store is closed, nothing can be: what waits is dropped, as its callers are told). */
  flush(): void {
    const written = this.written;
    if (!written) return;
    this.written = undefined;
    const rows = [...this.pending.values()];
    this.pending.clear();
    try {
      if (!this.db.open) throw new Error('the store is closed');
      this.write(rows);
      written.settle();
    } catch (error) {
      written.settle(error);
    }
  }
}
