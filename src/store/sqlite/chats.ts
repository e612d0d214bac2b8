import type Database from 'better-sqlite3';
import type { ChatPort, ChatRequest, ChatRequestStatus } from '../port.js';

interface ChatRow {
  id: number;
  from_agent: string;
  to_agent: string;
  reason: string;
  status: ChatRequestStatus;
  created_at: number;
  expires_at: number;
  sender_told: number;
}

const toChat = (row: ChatRow): ChatRequest => ({
  id: row.id,
  from: row.from_agent,
  to: row.to_agent,
  reason: row.reason,
  status: row.status,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  senderTold: row.sender_told === 1,
});

const UPSERT_CHAT = `INSERT INTO chat_requests (id, from_agent, to_agent, reason, status, created_at, expires_at, sender_told)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET status = excluded.status, sender_told = excluded.sender_told`;

const upserts = new WeakMap<Database.Database, Database.Statement>();

/**
 * Stores a pair room's chat request as its decision left it (a `chat-request` write, inside the decision's
 * transaction): a new one is inserted; a known one changes only its status and told flag.
 */
export function upsertChat(db: Database.Database, r: ChatRequest): void {
  let upsert = upserts.get(db);
  if (!upsert) {
    upsert = db.prepare(UPSERT_CHAT);
    upserts.set(db, upsert);
  }
  upsert.run(r.id, r.from, r.to, r.reason, r.status, r.createdAt, r.expiresAt, r.senderTold ? 1 : 0);
}

/** Private agent-to-agent chat requests. */
export class SqliteChats implements ChatPort {
  private readonly q;
  constructor(db: Database.Database) {
    this.q = {
      insert: db.prepare(
        `INSERT INTO chat_requests (from_agent, to_agent, reason, status, created_at, expires_at)
         VALUES (?, ?, ?, 'pending', ?, ?)`,
      ),
      get: db.prepare<[number], ChatRow>('SELECT * FROM chat_requests WHERE id = ?'),
      next: db.prepare<[], { next: number }>('SELECT coalesce(max(id), 0) + 1 AS next FROM chat_requests'),
      setStatus: db.prepare('UPDATE chat_requests SET status = ? WHERE id = ?'),
      told: db.prepare('UPDATE chat_requests SET sender_told = 1 WHERE id = ?'),
      expire: db.prepare("UPDATE chat_requests SET status = 'expired' WHERE status = 'pending' AND expires_at <= ?"),
      involving: db.prepare<[string, string], ChatRow>(
        `SELECT * FROM chat_requests WHERE lower(from_agent) = lower(?) OR lower(to_agent) = lower(?) ORDER BY id`,
      ),
    };
  }

  async nextId(): Promise<number> {
    return this.q.next.get()?.next ?? 1;
  }

  async create(from: string, to: string, reason: string, now: number, ttlMs: number): Promise<ChatRequest> {
    const id = Number(this.q.insert.run(from, to, reason, now, now + ttlMs).lastInsertRowid);
    const row = this.q.get.get(id);
    if (!row) throw new Error(`chat request ${id} was not stored`);
    return toChat(row);
  }

  async get(id: number): Promise<ChatRequest | undefined> {
    const row = this.q.get.get(id);
    return row ? toChat(row) : undefined;
  }

  async setStatus(id: number, status: ChatRequestStatus): Promise<void> {
    this.q.setStatus.run(status, id);
  }

  /** The sender has been told how its request ended. */
  async markTold(id: number): Promise<void> {
    this.q.told.run(id);
  }

  /** Marks requests past their expiry as expired. */
  async expire(now: number): Promise<void> {
    this.q.expire.run(now);
  }

  /** Every request sent or received by `agent`, oldest first. */
  async involving(agent: string): Promise<ChatRequest[]> {
    return this.q.involving.all(agent, agent).map(toChat);
  }
}
