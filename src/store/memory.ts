import type Database from 'better-sqlite3';

/** One thing an agent remembers. */
export interface KnowledgeRow {
  readonly key: string;
  readonly value: string;
}

/** One of an agent's recent actions. */
export interface ActionRow {
  readonly at: number;
  readonly room: string;
  readonly text: string;
}

/** Actions kept per agent: the context shows the newest that fit; older ones are of no use. */
const ACTIONS_KEPT = 200;

/** Each agent's knowledge (remember / forget), kept across restarts. */
export class KnowledgeStore {
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

  list(agent: string): KnowledgeRow[] {
    return this.q.list.all(agent.toLowerCase());
  }

  has(agent: string, key: string): boolean {
    return this.q.has.get(agent.toLowerCase(), key) !== undefined;
  }

  count(agent: string): number {
    return this.q.count.get(agent.toLowerCase())?.n ?? 0;
  }

  set(agent: string, key: string, value: string, at: number): void {
    this.q.set.run(agent.toLowerCase(), key, value, at);
  }

  /** True when there was something to forget. */
  delete(agent: string, key: string): boolean {
    return this.q.delete.run(agent.toLowerCase(), key).changes > 0;
  }
}

/** A short log of each agent's actions (tool runs, messages sent elsewhere). */
export class ActionLog {
  private readonly q;
  constructor(private readonly db: Database.Database) {
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
  }

  add(agent: string, room: string, text: string, at: number): void {
    const name = agent.toLowerCase();
    this.db.transaction(() => {
      this.q.add.run(name, room, text, at);
      this.q.prune.run(name, name);
    })();
  }

  /** Newest first. */
  recent(agent: string, limit = 50): ActionRow[] {
    return this.q.recent.all(agent.toLowerCase(), limit);
  }
}
