import type pg from 'pg';
import { type Place, shownAt } from '../../room/privacy.js';
import type { ActionPort, ActionRow, KnowledgePort, KnowledgeRow } from '../port.js';
import { ACTIONS_KEPT, audienceKey, placeOf } from '../sqlite/memory.js';
import { rows, run, statement, transaction } from './pool.js';
import { writeError } from './write-errors.js';

const Q = {
  // Keys in byte order (COLLATE "C" in the schema), as SQLite sorts them.
  inRoom: statement(
    'knowledge-in-room',
    'SELECT key, value, audience FROM knowledge WHERE agent = $1 AND room = $2 ORDER BY key, audience',
  ),
  set: statement(
    'knowledge-set',
    `INSERT INTO knowledge (agent, room, audience, key, value, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (agent, room, audience, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  ),
  keyed: statement(
    'knowledge-keyed',
    'SELECT audience FROM knowledge WHERE agent = $1 AND room = $2 AND key = $3 FOR UPDATE',
  ),
  delete: statement(
    'knowledge-delete',
    'DELETE FROM knowledge WHERE agent = $1 AND room = $2 AND audience = $3 AND key = $4',
  ),
  count: statement('knowledge-count', 'SELECT count(*) AS n FROM knowledge WHERE agent = $1 AND room = $2'),
  has: statement(
    'knowledge-has',
    'SELECT 1 AS one FROM knowledge WHERE agent = $1 AND room = $2 AND audience = $3 AND key = $4',
  ),
  // One statement: the DELETE sees the room's actions as they were before this INSERT, so keeping the newest
  // ACTIONS_KEPT - 1 of those and the new one keeps ACTIONS_KEPT.
  addPruned: statement(
    'actions-add',
    `WITH added AS (INSERT INTO agent_actions (agent, room, audience, action, at) VALUES ($1, $2, $3, $4, $5))
     DELETE FROM agent_actions WHERE agent = $1 AND room = $2 AND id <= (
       SELECT id FROM agent_actions WHERE agent = $1 AND room = $2 ORDER BY id DESC LIMIT 1
       OFFSET ${ACTIONS_KEPT - 1})`,
  ),
  recent: statement(
    'actions-recent',
    `SELECT at, room, action AS text, audience FROM agent_actions WHERE agent = $1 AND room = $2
     ORDER BY id DESC LIMIT ${ACTIONS_KEPT}`,
  ),
};

/**
 * Each agent's knowledge (remember / forget), kept across restarts by the place it was learnt in, and shown only where
 * that place may be (`shownAt`). Agent names are compared case-insensitively.
 */
export class PostgresKnowledge implements KnowledgePort {
  constructor(private readonly pool: pg.Pool) {}

  async list(agent: string, here: Place): Promise<KnowledgeRow[]> {
    const found = await rows<KnowledgeRow & { audience: string }>(this.pool, Q.inRoom, [
      agent.toLowerCase(),
      here.room,
    ]);
    return found
      .filter((row) => shownAt(placeOf(here.room, row.audience), here))
      .map(({ key, value }) => ({ key, value }));
  }

  async has(agent: string, place: Place, key: string): Promise<boolean> {
    const found = await rows(this.pool, Q.has, [agent.toLowerCase(), place.room, audienceKey(place.audience), key]);
    return found.length > 0;
  }

  async count(agent: string, room: string): Promise<number> {
    const [row] = await rows<{ n: number }>(this.pool, Q.count, [agent.toLowerCase(), room]);
    return row?.n ?? 0;
  }

  async set(agent: string, place: Place, key: string, value: string, at: number): Promise<void> {
    try {
      await run(this.pool, Q.set, [agent.toLowerCase(), place.room, audienceKey(place.audience), key, value, at]);
    } catch (error) {
      throw writeError(error);
    }
  }

  /** Forgets `key` wherever it is shown at `here`; true when there was something to forget. */
  async delete(agent: string, here: Place, key: string): Promise<boolean> {
    const name = agent.toLowerCase();
    try {
      const deleted = await transaction(this.pool, async (tx) => {
        let count = 0;
        for (const { audience } of await rows<{ audience: string }>(tx, Q.keyed, [name, here.room, key])) {
          if (!shownAt(placeOf(here.room, audience), here)) continue;
          count += await run(tx, Q.delete, [name, here.room, audience, key]);
        }
        return count;
      });
      return deleted > 0;
    } catch (error) {
      throw writeError(error);
    }
  }
}

/**
 * A short log of each agent's actions (tool runs, messages sent elsewhere) with the place each happened in: the newest
 * ACTIONS_KEPT of each room are kept, and an action is shown only where its place may be (`shownAt`).
 */
export class PostgresActions implements ActionPort {
  constructor(private readonly pool: pg.Pool) {}

  async add(agent: string, place: Place, text: string, at: number): Promise<void> {
    const audience = place.audience === null ? null : audienceKey(place.audience);
    try {
      await run(this.pool, Q.addPruned, [agent.toLowerCase(), place.room, audience, text, at]);
    } catch (error) {
      throw writeError(error);
    }
  }

  /** Newest first. */
  async recent(agent: string, here: Place, limit = 50): Promise<ActionRow[]> {
    const found = await rows<ActionRow & { audience: string | null }>(this.pool, Q.recent, [
      agent.toLowerCase(),
      here.room,
    ]);
    return found
      .filter((row) => shownAt(placeOf(row.room, row.audience), here))
      .slice(0, limit)
      .map(({ at, room, text }) => ({ at, room, text }));
  }
}
