import type pg from 'pg';
import type { ActionPort, ActionRow, KnowledgePort, KnowledgeRow } from '../port.js';
import { ACTIONS_KEPT } from '../sqlite/memory.js';
import { rows, run, statement } from './pool.js';

const Q = {
  list: statement('knowledge-list', 'SELECT key, value FROM knowledge WHERE agent = $1 ORDER BY key'),
  set: statement(
    'knowledge-set',
    `INSERT INTO knowledge (agent, key, value, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  ),
  delete: statement('knowledge-delete', 'DELETE FROM knowledge WHERE agent = $1 AND key = $2'),
  count: statement('knowledge-count', 'SELECT count(*) AS n FROM knowledge WHERE agent = $1'),
  has: statement('knowledge-has', 'SELECT 1 AS one FROM knowledge WHERE agent = $1 AND key = $2'),
  // One statement: the DELETE sees the actions as they were before this INSERT, so keeping the newest
  // ACTIONS_KEPT - 1 of those and the new one keeps ACTIONS_KEPT.
  addPruned: statement(
    'actions-add',
    `WITH added AS (INSERT INTO agent_actions (agent, room, action, at) VALUES ($1, $2, $3, $4))
     DELETE FROM agent_actions WHERE agent = $1 AND id <= (
       SELECT id FROM agent_actions WHERE agent = $1 ORDER BY id DESC LIMIT 1 OFFSET ${ACTIONS_KEPT - 1})`,
  ),
  recent: statement(
    'actions-recent',
    'SELECT at, room, action AS text FROM agent_actions WHERE agent = $1 ORDER BY id DESC LIMIT $2',
  ),
};

/** Each agent's knowledge (remember / forget), kept across restarts. Agent names are compared case-insensitively. */
export class PostgresKnowledge implements KnowledgePort {
  constructor(private readonly pool: pg.Pool) {}

  async list(agent: string): Promise<KnowledgeRow[]> {
    return rows<KnowledgeRow>(this.pool, Q.list, [agent.toLowerCase()]);
  }

  async has(agent: string, key: string): Promise<boolean> {
    return (await rows(this.pool, Q.has, [agent.toLowerCase(), key])).length > 0;
  }

  async count(agent: string): Promise<number> {
    const [row] = await rows<{ n: number }>(this.pool, Q.count, [agent.toLowerCase()]);
    return row?.n ?? 0;
  }

  async set(agent: string, key: string, value: string, at: number): Promise<void> {
    await run(this.pool, Q.set, [agent.toLowerCase(), key, value, at]);
  }

  /** True when there was something to forget. */
  async delete(agent: string, key: string): Promise<boolean> {
    return (await run(this.pool, Q.delete, [agent.toLowerCase(), key])) > 0;
  }
}

/** A short log of each agent's actions (tool runs, messages sent elsewhere): the newest ACTIONS_KEPT are kept. */
export class PostgresActions implements ActionPort {
  constructor(private readonly pool: pg.Pool) {}

  async add(agent: string, room: string, text: string, at: number): Promise<void> {
    await run(this.pool, Q.addPruned, [agent.toLowerCase(), room, text, at]);
  }

  /** Newest first. */
  async recent(agent: string, limit = 50): Promise<ActionRow[]> {
    return rows<ActionRow>(this.pool, Q.recent, [agent.toLowerCase(), limit]);
  }
}
