import type Database from 'better-sqlite3';

export type WorkKind = 'round' | 'turn';
export type WorkStatus = 'open' | 'done' | 'dropped';
export type TurnOutcome = 'posted' | 'passed' | 'failed' | 'ended';

/** A unit of work in flight (or finished): a round of turns, or one agent's turn. */
export interface WorkRow {
  readonly id: number;
  readonly room: string;
  readonly kind: WorkKind;
  readonly key: string;
  readonly parentId: number | null;
  readonly agent: string | null;
  readonly messageId: number | null;
  readonly frame: unknown;
  readonly status: WorkStatus;
  readonly outcome: TurnOutcome | null;
  /** How many times it was started: more than one after a restart cut it. */
  readonly attempts: number;
  readonly createdAt: number;
}

export type OutboxPurpose = 'reply' | 'action' | 'system';

export interface OutboxEntry {
  readonly id: number;
  readonly channelId: number;
  readonly workId: number | null;
  readonly purpose: OutboxPurpose;
  readonly agent: string | null;
  readonly text: string;
  readonly meta: unknown;
  readonly status: 'pending' | 'sent' | 'failed';
  readonly createdAt: number;
}

export type ToolRunStatus = 'started' | 'ok' | 'refused' | 'failed';

export interface ToolRunRow {
  readonly id: number;
  readonly workId: number;
  readonly tool: string;
  /** Canonical JSON of the arguments: a re-run call with the same arguments is the same call. */
  readonly args: string;
  readonly status: ToolRunStatus;
  readonly input: string | null;
  readonly output: string | null;
}

interface WorkDb {
  id: number;
  room: string;
  kind: WorkKind;
  key: string;
  parent_id: number | null;
  agent: string | null;
  message_id: number | null;
  frame: string | null;
  status: WorkStatus;
  outcome: TurnOutcome | null;
  attempts: number;
  created_at: number;
}

interface OutboxDb {
  id: number;
  channel_id: number;
  work_id: number | null;
  purpose: OutboxPurpose;
  agent: string | null;
  text: string;
  meta: string | null;
  status: OutboxEntry['status'];
  created_at: number;
}

const toWork = (r: WorkDb): WorkRow => ({
  id: r.id,
  room: r.room,
  kind: r.kind,
  key: r.key,
  parentId: r.parent_id,
  agent: r.agent,
  messageId: r.message_id,
  frame: r.frame === null ? null : (JSON.parse(r.frame) as unknown),
  status: r.status,
  outcome: r.outcome,
  attempts: r.attempts,
  createdAt: r.created_at,
});

const toEntry = (r: OutboxDb): OutboxEntry => ({
  id: r.id,
  channelId: r.channel_id,
  workId: r.work_id,
  purpose: r.purpose,
  agent: r.agent,
  text: r.text,
  meta: r.meta === null ? null : (JSON.parse(r.meta) as unknown),
  status: r.status,
  createdAt: r.created_at,
});

/**
 * The journal of work in flight: rounds and turns, the outbox, and tool runs. Whatever a crash cuts is
 * found here on start, and resumed once.
 */
export class JournalStore {
  private readonly q;

  constructor(db: Database.Database) {
    this.q = {
      insertWork: db.prepare(
        `INSERT INTO work (room, kind, key, parent_id, agent, message_id, frame, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      work: db.prepare<[string, string], WorkDb>('SELECT * FROM work WHERE room = ? AND key = ?'),
      byId: db.prepare<[number], WorkDb>('SELECT * FROM work WHERE id = ?'),
      attempt: db.prepare("UPDATE work SET attempts = attempts + 1 WHERE id = ? AND status = 'open'"),
      setFrame: db.prepare('UPDATE work SET frame = ? WHERE id = ?'),
      finish: db.prepare("UPDATE work SET status = ?, outcome = coalesce(?, outcome) WHERE id = ? AND status = 'open'"),
      open: db.prepare<[], WorkDb>("SELECT * FROM work WHERE status = 'open' ORDER BY id"),
      children: db.prepare<[number], WorkDb>('SELECT * FROM work WHERE parent_id = ? ORDER BY id'),
      dropRounds: db.prepare(
        "UPDATE work SET status = 'dropped' WHERE room = ? AND kind = 'round' AND status = 'open' AND id < ?",
      ),
      dropRoom: db.prepare("UPDATE work SET status = 'dropped' WHERE room = ? AND kind = 'round' AND status = 'open'"),
      addEntry: db.prepare(
        `INSERT INTO outbox (channel_id, work_id, purpose, agent, text, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      sent: db.prepare("UPDATE outbox SET status = 'sent', platform_ids = ? WHERE id = ?"),
      failed: db.prepare("UPDATE outbox SET status = 'failed' WHERE id = ? AND status = 'pending'"),
      pending: db.prepare<[], OutboxDb>("SELECT * FROM outbox WHERE status = 'pending' ORDER BY id"),
      entry: db.prepare<[number], OutboxDb>('SELECT * FROM outbox WHERE id = ?'),
      toolStarted: db.prepare(
        "INSERT INTO tool_runs (work_id, tool, args, status, started_at) VALUES (?, ?, ?, 'started', ?)",
      ),
      toolEnded: db.prepare('UPDATE tool_runs SET status = ?, input = ?, output = ? WHERE id = ?'),
      toolRuns: db.prepare<
        [number],
        {
          id: number;
          work_id: number;
          tool: string;
          args: string;
          status: ToolRunStatus;
          input: string | null;
          output: string | null;
        }
      >('SELECT id, work_id, tool, args, status, input, output FROM tool_runs WHERE work_id = ? ORDER BY id'),
    };
  }

  /** A round for `messageId` in `room`, opened once; null when it already exists. */
  openRound(room: string, messageId: number, now: number): number | null {
    const info = this.q.insertWork.run(room, 'round', `message:${messageId}`, null, null, messageId, null, now);
    return info.changes === 0 ? null : Number(info.lastInsertRowid);
  }

  /**
   * Starts the turn named `key` in `room`: a new row, or — after a restart cut it — the same row with one
   * more attempt. A finished turn is returned as it is (it is never run again).
   */
  beginTurn(input: {
    room: string;
    key: string;
    agent: string;
    parentId: number | null;
    frame: unknown;
    now: number;
  }): WorkRow {
    const existing = this.q.work.get(input.room, input.key);
    if (existing) {
      if (existing.status === 'open') this.q.attempt.run(existing.id);
      return toWork(this.q.byId.get(existing.id) ?? existing);
    }
    const info = this.q.insertWork.run(
      input.room,
      'turn',
      input.key,
      input.parentId,
      input.agent,
      null,
      JSON.stringify(input.frame),
      input.now,
    );
    return toWork(this.q.byId.get(Number(info.lastInsertRowid)) as WorkDb);
  }

  get(id: number): WorkRow | undefined {
    const row = this.q.byId.get(id);
    return row ? toWork(row) : undefined;
  }

  find(room: string, key: string): WorkRow | undefined {
    const row = this.q.work.get(room, key);
    return row ? toWork(row) : undefined;
  }

  setFrame(id: number, frame: unknown): void {
    this.q.setFrame.run(JSON.stringify(frame), id);
  }

  /** Marks open work finished (done) or given up (dropped); finished work stays as it was. */
  finish(id: number, status: 'done' | 'dropped', outcome?: TurnOutcome): void {
    this.q.finish.run(status, outcome ?? null, id);
  }

  /** Every open round and turn, oldest first. */
  open(): WorkRow[] {
    return this.q.open.all().map(toWork);
  }

  /** The turns of a round, oldest first. */
  turnsOf(roundId: number): WorkRow[] {
    return this.q.children.all(roundId).map(toWork);
  }

  /** Open rounds in `room` older than round `newer` are dropped: a newer human message supersedes them. */
  supersede(room: string, newer: number): void {
    this.q.dropRounds.run(room, newer);
  }

  /** Every open round in `room` is dropped (an operator's /pass, /reset, /clear). */
  dropRounds(room: string): void {
    this.q.dropRoom.run(room);
  }

  // ---- outbox ----

  addPost(entry: {
    channelId: number;
    workId: number | null;
    purpose: OutboxPurpose;
    agent: string | null;
    text: string;
    meta?: unknown;
    now: number;
  }): OutboxEntry {
    const info = this.q.addEntry.run(
      entry.channelId,
      entry.workId,
      entry.purpose,
      entry.agent,
      entry.text,
      entry.meta === undefined ? null : JSON.stringify(entry.meta),
      entry.now,
    );
    return toEntry(this.q.entry.get(Number(info.lastInsertRowid)) as OutboxDb);
  }

  sent(id: number, platformIds: readonly string[]): void {
    this.q.sent.run(JSON.stringify(platformIds), id);
  }

  failed(id: number): void {
    this.q.failed.run(id);
  }

  /** Posts written down but not known to be sent, oldest first. */
  pendingPosts(): OutboxEntry[] {
    return this.q.pending.all().map(toEntry);
  }

  // ---- tool runs ----

  toolStarted(workId: number, tool: string, args: string, now: number): number {
    return Number(this.q.toolStarted.run(workId, tool, args, now).lastInsertRowid);
  }

  toolEnded(id: number, result: { status: Exclude<ToolRunStatus, 'started'>; input: string; output: string }): void {
    this.q.toolEnded.run(result.status, result.input, result.output, id);
  }

  toolRuns(workId: number): ToolRunRow[] {
    return this.q.toolRuns.all(workId).map((r) => ({
      id: r.id,
      workId: r.work_id,
      tool: r.tool,
      args: r.args,
      status: r.status,
      input: r.input,
      output: r.output,
    }));
  }
}
