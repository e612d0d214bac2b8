import type pg from 'pg';
import type { ChatPort, ChatRequest, ChatRequestStatus } from '../port.js';
import { rows, run, statement } from './pool.js';

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

/** A pair room's chat request as its decision left it (a `chat-request` write): only its status and told flag change. */
export const UPSERT_CHAT = statement(
  'chat-upsert',
  `INSERT INTO chat_requests (id, from_agent, to_agent, reason, status, created_at, expires_at, sender_told)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
   ON CONFLICT (id) DO UPDATE SET status = excluded.status, sender_told = excluded.sender_told`,
);

export const chatValues = (r: ChatRequest): Array<string | number> => [
  r.id,
  r.from,
  r.to,
  r.reason,
  r.status,
  r.createdAt,
  r.expiresAt,
  r.senderTold ? 1 : 0,
];

const Q = {
  next: statement('chat-next', "SELECT nextval(pg_get_serial_sequence('chat_requests', 'id')) AS next"),
  insert: statement(
    'chat-insert',
    `INSERT INTO chat_requests (from_agent, to_agent, reason, status, created_at, expires_at)
     VALUES ($1, $2, $3, 'pending', $4, $5) RETURNING *`,
  ),
  get: statement('chat-get', 'SELECT * FROM chat_requests WHERE id = $1'),
  setStatus: statement('chat-status', 'UPDATE chat_requests SET status = $1 WHERE id = $2'),
  told: statement('chat-told', 'UPDATE chat_requests SET sender_told = 1 WHERE id = $1'),
  expire: statement(
    'chat-expire',
    "UPDATE chat_requests SET status = 'expired' WHERE status = 'pending' AND expires_at <= $1",
  ),
  involving: statement(
    'chat-involving',
    'SELECT * FROM chat_requests WHERE lower(from_agent) = lower($1) OR lower(to_agent) = lower($1) ORDER BY id',
  ),
};

/** Private agent-to-agent chat requests. */
export class PostgresChats implements ChatPort {
  constructor(private readonly pool: pg.Pool) {}

  async nextId(): Promise<number> {
    const [row] = await rows<{ next: string | number }>(this.pool, Q.next, []);
    return Number(row?.next);
  }

  async create(from: string, to: string, reason: string, now: number, ttlMs: number): Promise<ChatRequest> {
    const [row] = await rows<ChatRow>(this.pool, Q.insert, [from, to, reason, now, now + ttlMs]);
    if (!row) throw new Error('the chat request was not stored');
    return toChat(row);
  }

  async get(id: number): Promise<ChatRequest | undefined> {
    const [row] = await rows<ChatRow>(this.pool, Q.get, [id]);
    return row ? toChat(row) : undefined;
  }

  async setStatus(id: number, status: ChatRequestStatus): Promise<void> {
    await run(this.pool, Q.setStatus, [status, id]);
  }

  /** The sender has been told how its request ended. */
  async markTold(id: number): Promise<void> {
    await run(this.pool, Q.told, [id]);
  }

  /** Marks requests past their expiry as expired. */
  async expire(now: number): Promise<void> {
    await run(this.pool, Q.expire, [now]);
  }

  /** Every request sent or received by `agent`, oldest first. */
  async involving(agent: string): Promise<ChatRequest[]> {
    return (await rows<ChatRow>(this.pool, Q.involving, [agent])).map(toChat);
  }
}
