import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { AuthorKind } from '../ports.js';
import type { RoomMessage, ToolRun, TurnState } from '../room/types.js';
import { ChatStore, ThreadStore } from './collaboration.js';
import { EmbeddingStore } from './embeddings.js';
import { JournalStore } from './journal.js';
import { ActionLog, KnowledgeStore } from './memory.js';
import { migrate } from './migrate.js';
import { UsageStore } from './usage.js';

export interface ChannelRow {
  readonly id: number;
  readonly platform: string;
  readonly channel: string;
  /** The agent whose private room this is, for DMs. */
  readonly directAgent: string | null;
  /** The room's privacy as an operator set it (/privacy); null: the configured default. */
  readonly privacy: 'off' | 'mentions' | null;
}

/** A message to store: a RoomMessage before it has a row id. */
export interface NewMessage extends Omit<RoomMessage, 'id' | 'toolRuns'> {
  readonly channelId: number;
  readonly toolRuns?: readonly ToolRun[];
  /** Platform ids of the message (several for a reply posted in chunks); none for a message not yet posted. */
  readonly platformIds?: readonly string[];
}

interface MessageRow {
  id: number;
  author: string;
  author_id: string;
  kind: AuthorKind;
  content: string;
  mentions: string;
  requests: string | null;
  audience: string | null;
  tool_runs: string | null;
  created_at: number;
}

function toMessage(row: MessageRow): RoomMessage {
  return {
    id: row.id,
    author: row.author,
    authorId: row.author_id,
    kind: row.kind,
    content: row.content,
    mentions: JSON.parse(row.mentions) as string[],
    ...(row.requests !== null ? { requests: JSON.parse(row.requests) as string[] } : {}),
    ...(row.audience !== null ? { audience: JSON.parse(row.audience) as string[] } : {}),
    toolRuns: row.tool_runs ? (JSON.parse(row.tool_runs) as ToolRun[]) : [],
    at: row.created_at,
  };
}

/** Typed queries over the SQLite file. All methods are synchronous (better-sqlite3). */
export class Store {
  readonly db: Database.Database;
  readonly threads: ThreadStore;
  readonly chats: ChatStore;
  readonly usage: UsageStore;
  readonly embeddings: EmbeddingStore;
  readonly knowledge: KnowledgeStore;
  readonly actions: ActionLog;
  /** Work in flight, the outbox and tool runs (what a restart resumes). */
  readonly journal: JournalStore;
  private readonly q;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    migrate(this.db);
    const db = this.db;
    this.threads = new ThreadStore(db);
    this.chats = new ChatStore(db);
    this.usage = new UsageStore(db);
    this.embeddings = new EmbeddingStore(db);
    this.knowledge = new KnowledgeStore(db);
    this.actions = new ActionLog(db);
    this.journal = new JournalStore(db);
    this.q = {
      channel: db.prepare<
        [string, string],
        { id: number; direct_agent: string | null; privacy: 'off' | 'mentions' | null }
      >('SELECT id, direct_agent, privacy FROM channels WHERE platform = ? AND channel = ?'),
      setPrivacy: db.prepare('UPDATE channels SET privacy = ? WHERE id = ?'),
      humans: db.prepare<[number, number], { author: string }>(
        `SELECT author FROM messages WHERE channel_id = ? AND kind = 'human'
         GROUP BY lower(author) ORDER BY max(id) DESC LIMIT ?`,
      ),
      insertChannel: db.prepare(
        'INSERT INTO channels (platform, channel, direct_agent, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      channels: db.prepare<
        [],
        {
          id: number;
          platform: string;
          channel: string;
          direct_agent: string | null;
          privacy: 'off' | 'mentions' | null;
        }
      >('SELECT id, platform, channel, direct_agent, privacy FROM channels ORDER BY id'),
      refExists: db.prepare<[number, string, number, string], { one: number }>(
        `SELECT 1 AS one FROM messages WHERE channel_id = ? AND platform_message_id = ?
         UNION ALL SELECT 1 FROM message_refs WHERE channel_id = ? AND platform_message_id = ? LIMIT 1`,
      ),
      insertRef: db.prepare(
        'INSERT INTO message_refs (channel_id, platform_message_id, message_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      insertMessage: db.prepare(
        `INSERT INTO messages (channel_id, platform_message_id, author, author_id, kind, content, mentions, requests, audience, tool_runs, created_at)
         SELECT :channel, :pid, :author, :authorId, :kind, :content, :mentions, :requests, :audience, :toolRuns, :at
         WHERE NOT EXISTS (SELECT 1 FROM message_refs WHERE channel_id = :channel AND platform_message_id = :pid)
         ON CONFLICT DO NOTHING`,
      ),
      history: db.prepare<[number, number], MessageRow>(
        `SELECT * FROM (SELECT id, author, author_id, kind, content, mentions, requests, audience, tool_runs, created_at
           FROM messages WHERE channel_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id`,
      ),
      lastRef: db.prepare<[string, string], { platform_message_id: string }>(
        `SELECT m.platform_message_id FROM messages m JOIN channels c ON c.id = m.channel_id
         WHERE c.platform = ? AND c.channel = ? AND m.platform_message_id IS NOT NULL ORDER BY m.id DESC LIMIT 1`,
      ),
      turn: db.prepare<[number], { consecutive: number; control: 'agents' | 'humans'; control_reason: string | null }>(
        'SELECT consecutive, control, control_reason FROM channels WHERE id = ?',
      ),
      setTurn: db.prepare('UPDATE channels SET consecutive = ?, control = ?, control_reason = ? WHERE id = ?'),
      keepIds: db.prepare(
        `INSERT INTO message_refs (channel_id, platform_message_id, message_id)
         SELECT channel_id, platform_message_id, NULL FROM messages
         WHERE channel_id = ? AND platform_message_id IS NOT NULL ON CONFLICT DO NOTHING`,
      ),
      clear: db.prepare('DELETE FROM messages WHERE channel_id = ?'),
      byId: db.prepare<[number, number], MessageRow>(
        `SELECT id, author, author_id, kind, content, mentions, requests, audience, tool_runs, created_at FROM messages
         WHERE channel_id = ? AND id = ?`,
      ),
      newestHuman: db.prepare<[number], { id: number | null }>(
        "SELECT max(id) AS id FROM messages WHERE channel_id = ? AND kind = 'human'",
      ),
      active: db.prepare<[string], { channel: string; direct_agent: string | null }>(
        `SELECT c.channel, c.direct_agent FROM channels c LEFT JOIN messages m ON m.channel_id = c.id
         WHERE c.platform = ? GROUP BY c.id ORDER BY max(m.id) DESC NULLS LAST, c.id DESC`,
      ),
      caughtUp: db.prepare<[string, string], { caught_up: string | null }>(
        'SELECT caught_up FROM channels WHERE platform = ? AND channel = ?',
      ),
      setCaughtUp: db.prepare('UPDATE channels SET caught_up = ? WHERE platform = ? AND channel = ?'),
      byPlatformId: db.prepare<[number, string, number, string], MessageRow>(
        `SELECT id, author, author_id, kind, content, mentions, requests, audience, tool_runs, created_at FROM messages
         WHERE channel_id = ? AND (platform_message_id = ? OR id = (SELECT message_id FROM message_refs
           WHERE channel_id = ? AND platform_message_id = ?))`,
      ),
      addressedBy: db.prepare<[number, string, string, string], { mentions: string }>(
        `SELECT mentions FROM messages WHERE channel_id = ?
         AND (platform_message_id = ? OR (platform_message_id >= ? AND platform_message_id < ?))`,
      ),
    };
  }

  /** The room's row, created on first sight. */
  channel(platform: string, channel: string, directAgent?: string): ChannelRow {
    let row = this.q.channel.get(platform, channel);
    if (!row) {
      this.q.insertChannel.run(platform, channel, directAgent ?? null, Date.now());
      row = this.q.channel.get(platform, channel);
    }
    if (!row) throw new Error(`channel ${platform}:${channel} could not be stored`);
    return { id: row.id, platform, channel, directAgent: row.direct_agent, privacy: row.privacy };
  }

  channels(): ChannelRow[] {
    return this.q.channels.all().map((r) => ({
      id: r.id,
      platform: r.platform,
      channel: r.channel,
      directAgent: r.direct_agent,
      privacy: r.privacy,
    }));
  }

  setPrivacy(channelId: number, privacy: 'off' | 'mentions' | null): void {
    this.q.setPrivacy.run(privacy, channelId);
  }

  /** The humans who spoke in a room, most recent first (their display names). */
  humans(channelId: number, limit = 50): string[] {
    return this.q.humans.all(channelId, limit).map((r) => r.author);
  }

  /** True when this platform message id was already stored in the room. */
  seen(channelId: number, platformId: string): boolean {
    return this.q.refExists.get(channelId, platformId, channelId, platformId) !== undefined;
  }

  /**
   * Stores a message once. Returns null when one of its platform ids is already stored
   * (the same platform message delivered again, or to another bot).
   */
  insertMessage(message: NewMessage): RoomMessage | null {
    const [first, ...more] = message.platformIds ?? [];
    // A single-chunk message is one INSERT: the unique key on its platform id (and the ids of
    // earlier chunks and cleared messages in message_refs) decide.
    if (more.length === 0) return this.insertOne(message, first);
    return this.insertChunked(message, first, more);
  }

  private insertOne(message: NewMessage, platformId: string | undefined): RoomMessage | null {
    const toolRuns = message.toolRuns && message.toolRuns.length > 0 ? JSON.stringify(message.toolRuns) : null;
    const info = this.q.insertMessage.run({
      channel: message.channelId,
      pid: platformId ?? null,
      author: message.author,
      authorId: message.authorId,
      kind: message.kind,
      content: message.content,
      mentions: JSON.stringify(message.mentions),
      requests: message.requests ? JSON.stringify(message.requests) : null,
      audience: message.audience ? JSON.stringify(message.audience) : null,
      toolRuns,
      at: message.at,
    });
    if (info.changes === 0) return null;
    return {
      id: Number(info.lastInsertRowid),
      author: message.author,
      authorId: message.authorId,
      kind: message.kind,
      content: message.content,
      mentions: [...message.mentions],
      ...(message.requests ? { requests: [...message.requests] } : {}),
      ...(message.audience ? { audience: [...message.audience] } : {}),
      toolRuns: message.toolRuns ? [...message.toolRuns] : [],
      at: message.at,
    };
  }

  private insertChunked(message: NewMessage, first: string | undefined, more: readonly string[]): RoomMessage | null {
    return this.db.transaction(() => {
      if ([first, ...more].some((id) => id !== undefined && this.seen(message.channelId, id))) return null;
      const stored = this.insertOne(message, first);
      if (stored) this.addPlatformIds(message.channelId, stored.id, more);
      return stored;
    })();
  }

  /** Records the platform ids a stored message got when it was posted (so its echo is recognised). */
  addPlatformIds(channelId: number, messageId: number | null, ids: readonly string[]): void {
    this.db.transaction(() => {
      for (const id of ids) this.q.insertRef.run(channelId, id, messageId);
    })();
  }

  /**
   * The agents a stored platform message and its stored edits (platform ids `<id>:edit:…`) addressed, or
   * undefined when none of them was stored.
   */
  addressedBy(channelId: number, platformId: string): string[] | undefined {
    const prefix = `${platformId}:edit:`;
    // `;` follows `:`: the range holds exactly the ids that start with the prefix (and uses the unique index).
    const rows = this.q.addressedBy.all(channelId, platformId, prefix, `${platformId}:edit;`);
    if (rows.length === 0) return undefined;
    return [...new Set(rows.flatMap((row) => JSON.parse(row.mentions) as string[]))];
  }

  /** The last `limit` messages of a room, oldest first. */
  history(channelId: number, limit: number): RoomMessage[] {
    return this.q.history.all(channelId, limit).map(toMessage);
  }

  /** The newest platform message id stored for a room (for catching up after a reconnect). */
  lastPlatformMessageId(platform: string, channel: string): string | undefined {
    return this.q.lastRef.get(platform, channel)?.platform_message_id;
  }

  /** The stored message a platform id belongs to (any chunk of it). */
  messageByPlatformId(channelId: number, platformId: string): RoomMessage | undefined {
    const row = this.q.byPlatformId.get(channelId, platformId, channelId, platformId);
    return row ? toMessage(row) : undefined;
  }

  /** A stored message of a room by its row id. */
  message(channelId: number, id: number): RoomMessage | undefined {
    const row = this.q.byId.get(channelId, id);
    return row ? toMessage(row) : undefined;
  }

  /** Row id of the newest human message in a room. */
  newestHumanId(channelId: number): number | undefined {
    return this.q.newestHuman.get(channelId)?.id ?? undefined;
  }

  /** The rooms of a platform, most recently active first. */
  activeRooms(platform: string): Array<{ channel: string; agent?: string }> {
    return this.q.active
      .all(platform)
      .map((r) => ({ channel: r.channel, ...(r.direct_agent ? { agent: r.direct_agent } : {}) }));
  }

  /** Where a room's catch-up starts: the newest platform id up to which nothing is missing, if recorded. */
  caughtUp(platform: string, channel: string): string | undefined {
    return this.q.caughtUp.get(platform, channel)?.caught_up ?? undefined;
  }

  setCaughtUp(platform: string, channel: string, platformId: string): void {
    this.q.setCaughtUp.run(platformId, platform, channel);
  }

  /** Runs `work` in one transaction: everything it writes is stored, or nothing (a crash cannot split it). */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  turnState(channelId: number): TurnState {
    const row = this.q.turn.get(channelId);
    if (!row) return { consecutive: 0, control: 'agents' };
    return { consecutive: row.consecutive, control: row.control, reason: row.control_reason ?? undefined };
  }

  setTurnState(channelId: number, state: TurnState): void {
    this.q.setTurn.run(state.consecutive, state.control, state.reason ?? null, channelId);
  }

  /** Forgets a room's messages (the dedupe keys stay, so nothing is answered twice). */
  clearHistory(channelId: number): void {
    this.db.transaction(() => {
      this.q.keepIds.run(channelId);
      this.q.clear.run(channelId);
    })();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export function openStore(file: string): Store {
  return new Store(file);
}
