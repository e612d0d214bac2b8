import type Database from 'better-sqlite3';
import type { ActionPort, ActionRow, KnowledgePort, KnowledgeRow } from '../port.js';

/** Actions kept per agent: the context shows the newest that fit; older ones are of no use. */
export const ACTIONS_KEPT = 200;

/** Each agent's knowledge (remember / forget), kept across restarts. Agent names are compared case-insensitively. */
export class SqliteKnowledge implements KnowledgePort {
  private readonly q;
  constructor(db: Database.Database) {
    this.q = {
      list: db.prepare<[string], KnowledgeRow>('SELECT key, value FROM knowledge WHERE agent = ? ORDER BY key'),
      set: db.prepare(
        `INSERT INTO knowledge (agent, key, value, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
      delete: db.prepare('DELETE FROM knowledge WHERE agent = ? AND key = ?'),
      count: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM knowledge WHERE agent = ?'),
      has: db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM knowledge WHERE agent = ? AND key = ?'),
    };
  }

  async list(agent: string): Promise<KnowledgeRow[]> {
    return this.q.list.all(agent.toLowerCase());
  }

  async has(agent: string, key: string): Promise<boolean> {
    return this.q.has.get(agent.toLowerCase(), key) !== undefined;
  }

  async count(agent: string): Promise<number> {
    return this.q.count.get(agent.toLowerCase())?.n ?? 0;
  }

  async set(agent: string, key: string, value: string, at: number): Promise<void> {
    this.q.set.run(agent.toLowerCase(), key, value, at);
  }

  /** True when there was something to forget. */
  async delete(agent: string, key: string): Promise<boolean> {
    return this.q.delete.run(agent.toLowerCase(), key).changes > 0;
  }
}

/** A short log of each agent's actions (tool runs, messages sent elsewhere): the newest ACTIONS_KEPT are kept. */
export class SqliteActions implements ActionPort {
  private readonly q;
  private readonly addPruned;
  constructor(db: Database.Database) {
    this.q = {
      add: db.prepare('INSERT INTO agent_actions (agent, room, action, at) VALUES (?, ?, ?, ?)'),
      prune: db.prepare(
        `DELETE FROM agent_actions WHERE agent = ? AND id <= (
           SELECT id FROM agent_actions WHERE agent = ? ORDER BY id DESC LIMIT 1 OFFSET ${ACTIONS_KEPT})`,
      ),
      recent: db.prepare<[string, number], ActionRow>(
        'SELECT at, room, action AS text FROM agent_actions WHERE agent = ? ORDER BY id DESC LIMIT ?',
      ),
    };
    this.addPruned = db.transaction((agent: string, room: string, text: string, at: number) => {
      this.q.add.run(agent, room, text, at);
      this.q.prune.run(agent, agent);
    });
  }

  async add(agent: string, room: string, text: string, at: number): Promise<void> {
    this.addPruned.immediate(agent.toLowerCase(), room, text, at);
  }

  /** Newest first. */
  async recent(agent: string, limit = 50): Promise<ActionRow[]> {
    return this.q.recent.all(agent.toLowerCase(), limit);
  }
}
