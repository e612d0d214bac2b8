import type Database from 'better-sqlite3';
import type { Answer, Participant, Thread, ThreadStatus } from '../room/threads.js';

interface ThreadRow {
  id: number;
  requester: string;
  origin_room: string;
  target_room: string;
  parent_id: number | null;
  request: string;
  awaited: string;
  answers: string;
  status: ThreadStatus;
  opened_at: number;
  deadline: number;
  opener: string | null;
}

const toThread = (row: ThreadRow): Thread => ({
  id: row.id,
  requester: row.requester,
  originRoom: row.origin_room,
  targetRoom: row.target_room,
  parentId: row.parent_id,
  request: row.request,
  awaited: JSON.parse(row.awaited) as Participant[],
  answers: JSON.parse(row.answers) as Answer[],
  status: row.status,
  openedAt: row.opened_at,
  deadline: row.deadline,
  ...(row.opener ? { opener: JSON.parse(row.opener) as NonNullable<Thread['opener']> } : {}),
});

/** request_reply threads, persisted so they survive a restart. */
export class ThreadStore {
  private readonly q;
  constructor(db: Database.Database) {
    this.q = {
      insert: db.prepare(
        `INSERT INTO threads (requester, origin_room, target_room, parent_id, request, awaited, answers, status, opened_at, deadline, opener)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      update: db.prepare('UPDATE threads SET answers = ?, status = ? WHERE id = ?'),
      live: db.prepare<[], ThreadRow>(
        "SELECT * FROM threads WHERE status IN ('open', 'answered', 'expired') ORDER BY id",
      ),
      all: db.prepare<[], ThreadRow>('SELECT * FROM threads ORDER BY id'),
    };
  }

  open(thread: Omit<Thread, 'id'>): Thread {
    const info = this.q.insert.run(
      thread.requester,
      thread.originRoom,
      thread.targetRoom,
      thread.parentId,
      thread.request,
      JSON.stringify(thread.awaited),
      JSON.stringify(thread.answers),
      thread.status,
      thread.openedAt,
      thread.deadline,
      thread.opener ? JSON.stringify(thread.opener) : null,
    );
    return { ...thread, id: Number(info.lastInsertRowid) };
  }

  save(thread: Thread): void {
    this.q.update.run(JSON.stringify(thread.answers), thread.status, thread.id);
  }

  /** Threads still waiting for answers or for their requester to resume. */
  live(): Thread[] {
    return this.q.live.all().map(toThread);
  }

  all(): Thread[] {
    return this.q.all.all().map(toThread);
  }
}

export type ChatRequestStatus = 'pending' | 'accepted' | 'declined' | 'expired';

export interface ChatRequest {
  readonly id: number;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly status: ChatRequestStatus;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** The sender was told it expired or was declined. */
  readonly senderTold: boolean;
}

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

/** Private agent-to-agent chat requests. */
export class ChatStore {
  private readonly q;
  constructor(db: Database.Database) {
    this.q = {
      insert: db.prepare(
        `INSERT INTO chat_requests (from_agent, to_agent, reason, status, created_at, expires_at)
         VALUES (?, ?, ?, 'pending', ?, ?)`,
      ),
      get: db.prepare<[number], ChatRow>('SELECT * FROM chat_requests WHERE id = ?'),
      setStatus: db.prepare('UPDATE chat_requests SET status = ? WHERE id = ?'),
      told: db.prepare('UPDATE chat_requests SET sender_told = 1 WHERE id = ?'),
      expire: db.prepare("UPDATE chat_requests SET status = 'expired' WHERE status = 'pending' AND expires_at <= ?"),
      involving: db.prepare<[string, string], ChatRow>(
        `SELECT * FROM chat_requests WHERE lower(from_agent) = lower(?) OR lower(to_agent) = lower(?) ORDER BY id`,
      ),
    };
  }

  create(from: string, to: string, reason: string, now: number, ttlMs: number): ChatRequest {
    const info = this.q.insert.run(from, to, reason, now, now + ttlMs);
    return this.get(Number(info.lastInsertRowid)) as ChatRequest;
  }

  get(id: number): ChatRequest | undefined {
    const row = this.q.get.get(id);
    return row ? toChat(row) : undefined;
  }

  setStatus(id: number, status: ChatRequestStatus): void {
    this.q.setStatus.run(status, id);
  }

  /** The sender has been told how its request ended. */
  markTold(id: number): void {
    this.q.told.run(id);
  }

  /** Marks requests past their expiry as expired. */
  expire(now: number): void {
    this.q.expire.run(now);
  }

  /** Every request sent or received by `agent`, oldest first. */
  involving(agent: string): ChatRequest[] {
    return this.q.involving.all(agent, agent).map(toChat);
  }
}
