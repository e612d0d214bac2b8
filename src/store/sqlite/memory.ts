import type Database from 'better-sqlite3';
import { type Place, shownAt } from '../../room/privacy.js';
import type { ActionPort, ActionRow, KnowledgePort, KnowledgeRow } from '../port.js';

/** Actions kept per agent and room: the context shows the newest that fit; older ones are of no use. */
export const ACTIONS_KEPT = 200;

/** An exchange's audience as stored: lower-cased names, sorted, as JSON; '' for the whole room. */
export function audienceKey(audience: readonly string[] | null): string {
  return audience === null ? '' : JSON.stringify([...new Set(audience.map((name) => name.toLowerCase()))].sort());
}

export function placeOf(room: string, audience: string | null): Place {
  return { room, audience: audience ? (JSON.parse(audience) as string[]) : null };
}

/**
 * Each agent's knowledge (remember / forget), kept across restarts by the place it was learnt in, and shown only where
 * that place may be (`shownAt`). Agent names are compared case-insensitively.
 */
export class SqliteKnowledge implements KnowledgePort {
  private readonly q;
  private readonly deleteShown;
  constructor(db: Database.Database) {
    this.q = {
      inRoom: db.prepare<[string, string], KnowledgeRow & { audience: string }>(
        'SELECT key, value, audience FROM knowledge WHERE agent = ? AND room = ? ORDER BY key, audience',
      ),
      set: db.prepare(
        `INSERT INTO knowledge (agent, room, audience, key, value, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (agent, room, audience, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
      keyed: db.prepare<[string, string, string], { audience: string }>(
        'SELECT audience FROM knowledge WHERE agent = ? AND room = ? AND key = ?',
      ),
      delete: db.prepare('DELETE FROM knowledge WHERE agent = ? AND room = ? AND audience = ? AND key = ?'),
      count: db.prepare<[string, string], { n: number }>(
        'SELECT COUNT(*) AS n FROM knowledge WHERE agent = ? AND room = ?',
      ),
      has: db.prepare<[string, string, string, string], { one: number }>(
        'SELECT 1 AS one FROM knowledge WHERE agent = ? AND room = ? AND audience = ? AND key = ?',
      ),
    };
    this.deleteShown = db.transaction((agent: string, here: Place, key: string): number => {
      let deleted = 0;
      for (const { audience } of this.q.keyed.all(agent, here.room, key)) {
        if (!shownAt(placeOf(here.room, audience), here)) continue;
        deleted += this.q.delete.run(agent, here.room, audience, key).changes;
      }
      return deleted;
    });
  }

  async list(agent: string, here: Place): Promise<KnowledgeRow[]> {
    return this.q.inRoom
      .all(agent.toLowerCase(), here.room)
      .filter((row) => shownAt(placeOf(here.room, row.audience), here))
      .map(({ key, value }) => ({ key, value }));
  }

  async has(agent: string, place: Place, key: string): Promise<boolean> {
    return this.q.has.get(agent.toLowerCase(), place.room, audienceKey(place.audience), key) !== undefined;
  }

  async count(agent: string, room: string): Promise<number> {
    return this.q.count.get(agent.toLowerCase(), room)?.n ?? 0;
  }

  async set(agent: string, place: Place, key: string, value: string, at: number): Promise<void> {
    this.q.set.run(agent.toLowerCase(), place.room, audienceKey(place.audience), key, value, at);
  }

  /** True when there was something to forget. */
  async delete(agent: string, here: Place, key: string): Promise<boolean> {
    return this.deleteShown(agent.toLowerCase(), here, key) > 0;
  }
}

/**
 * A short log of each agent's actions (tool runs, messages sent elsewhere) with the place each happened in: the newest
 * ACTIONS_KEPT of each room are kept, and an action is shown only where its place may be (`shownAt`).
 */
export class SqliteActions implements ActionPort {
  private readonly q;
  private readonly addPruned;
  constructor(db: Database.Database) {
    this.q = {
      add: db.prepare('INSERT INTO agent_actions (agent, room, audience, action, at) VALUES (?, ?, ?, ?, ?)'),
      prune: db.prepare(
        `DELETE FROM agent_actions WHERE agent = ? AND room = ? AND id <= (
           SELECT id FROM agent_actions WHERE agent = ? AND room = ? ORDER BY id DESC LIMIT 1 OFFSET ${ACTIONS_KEPT})`,
      ),
      recent: db.prepare<[string, string], ActionRow & { audience: string | null }>(
        `SELECT at, room, action AS text, audience FROM agent_actions WHERE agent = ? AND room = ?
         ORDER BY id DESC LIMIT ${ACTIONS_KEPT}`,
      ),
    };
    this.addPruned = db.transaction((agent: string, place: Place, text: string, at: number) => {
      this.q.add.run(agent, place.room, place.audience === null ? null : audienceKey(place.audience), text, at);
      this.q.prune.run(agent, place.room, agent, place.room);
    });
  }

  async add(agent: string, place: Place, text: string, at: number): Promise<void> {
    this.addPruned.immediate(agent.toLowerCase(), place, text, at);
  }

  /** Newest first. */
  async recent(agent: string, here: Place, limit = 50): Promise<ActionRow[]> {
    return this.q.recent
      .all(agent.toLowerCase(), here.room)
      .filter((row) => shownAt(placeOf(row.room, row.audience), here))
      .slice(0, limit)
      .map(({ at, room, text }) => ({ at, room, text }));
  }
}
