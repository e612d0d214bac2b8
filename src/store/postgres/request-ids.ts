/**
 * Blocks of request ids for bridges sharing the database: a sequence that steps by a block's size (migration 012
 * starts it above every id stored before), so each reservation is one `nextval`, and no two bridges get the same id.
 */
import type pg from 'pg';
import type { RequestIdBlocks } from '../port.js';
import { rows, statement } from './pool.js';

/** The sequence's step (migrations/postgres/012_replicas.sql). */
export const REQUEST_ID_BLOCK = 1000;

const RESERVE = statement('reserve-request-ids', "SELECT nextval('request_id_blocks') AS first");

export class PostgresRequestIds implements RequestIdBlocks {
  constructor(private readonly pool: pg.Pool) {}

  async reserve(): Promise<{ first: number; count: number }> {
    const [row] = await rows<{ first: number }>(this.pool, RESERVE);
    if (!row) throw new Error('the request id sequence gave nothing');
    return { first: row.first, count: REQUEST_ID_BLOCK };
  }
}
