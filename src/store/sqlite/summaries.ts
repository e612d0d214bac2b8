import type Database from 'better-sqlite3';
import type { RoomMessage } from '../../room/types.js';
import type { BlockSummary, SummaryPort } from '../port.js';
import { MESSAGE_COLUMNS, type MessageDb, toMessage } from './rows.js';

interface SummaryDb {
  first_id: number;
  width: number;
  messages: number;
  model: string;
  summary: string | null;
}

/** Block summaries of rooms' histories (migration 014), and the blocks' messages they are made from. */
export class SqliteSummaries implements SummaryPort {
  private readonly q;
  constructor(db: Database.Database) {
    this.q = {
      before: db.prepare<[string, number, number], SummaryDb>(
        `SELECT first_id, width, messages, model, summary FROM block_summaries
         WHERE room = ? AND width = ? AND first_id + width <= ? ORDER BY first_id`,
      ),
      put: db.prepare(
        `INSERT INTO block_summaries (room, first_id, width, messages, model, summary, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (room, width, first_id) DO NOTHING`,
      ),
      block: db.prepare<[string, number, number], MessageDb>(
        `SELECT ${MESSAGE_COLUMNS.split(', ')
          .map((column) => `m.${column}`)
          .join(', ')} FROM messages m JOIN channels c ON c.id = m.channel_id
         WHERE c.platform || ':' || c.channel = ? AND m.id >= ? AND m.id < ? ORDER BY m.id`,
      ),
    };
  }

  async before(room: string, width: number, before: number): Promise<BlockSummary[]> {
    return this.q.before.all(room, width, before).map((row) => ({
      firstId: row.first_id,
      width: row.width,
      messages: row.messages,
      model: row.model,
      summary: row.summary,
    }));
  }

  async put(room: string, summary: BlockSummary, at: number): Promise<boolean> {
    const { firstId, width, messages, model } = summary;
    return this.q.put.run(room, firstId, width, messages, model, summary.summary, at).changes > 0;
  }

  async block(room: string, from: number, to: number): Promise<RoomMessage[]> {
    return this.q.block.all(room, from, to).map(toMessage);
  }
}
