import type pg from 'pg';
import type { RoomMessage } from '../../room/types.js';
import type { BlockSummary, SummaryPort } from '../port.js';
import { MESSAGE_COLUMNS, type MessageDb, toMessage } from '../sqlite/rows.js';
import { rows, run, statement } from './pool.js';
import { writeError } from './write-errors.js';

interface SummaryDb {
  first_id: number;
  width: number;
  messages: number;
  model: string;
  summary: string | null;
}

const Q = {
  before: statement(
    'summaries-before',
    `SELECT first_id, width, messages, model, summary FROM block_summaries
     WHERE room = $1 AND width = $2 AND first_id + width <= $3 ORDER BY first_id`,
  ),
  put: statement(
    'summaries-put',
    `INSERT INTO block_summaries (room, first_id, width, messages, model, summary, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (room, width, first_id) DO NOTHING`,
  ),
  block: statement(
    'summaries-block',
    `SELECT ${MESSAGE_COLUMNS.split(', ')
      .map((column) => `m.${column}`)
      .join(', ')} FROM messages m JOIN channels c ON c.id = m.channel_id
     WHERE c.platform || ':' || c.channel = $1 AND m.id >= $2 AND m.id < $3 ORDER BY m.id`,
  ),
};

/** Block summaries of rooms' histories (migration 014), and the blocks' messages they are made from. */
export class PostgresSummaries implements SummaryPort {
  constructor(private readonly pool: pg.Pool) {}

  async before(room: string, width: number, before: number): Promise<BlockSummary[]> {
    return (await rows<SummaryDb>(this.pool, Q.before, [room, width, before])).map((row) => ({
      firstId: row.first_id,
      width: row.width,
      messages: row.messages,
      model: row.model,
      summary: row.summary,
    }));
  }

  async put(room: string, summary: BlockSummary, at: number): Promise<boolean> {
    const { firstId, width, messages, model } = summary;
    try {
      return (await run(this.pool, Q.put, [room, firstId, width, messages, model, summary.summary, at])) > 0;
    } catch (error) {
      throw writeError(error);
    }
  }

  async block(room: string, from: number, to: number): Promise<RoomMessage[]> {
    return (await rows<MessageDb>(this.pool, Q.block, [room, from, to])).map(toMessage);
  }
}
