import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../../log.js';
import type { StorePort } from '../port.js';
import { SqliteAccess } from './access.js';
import { SqliteChats } from './chats.js';
import { SqliteEmbeddings } from './embeddings.js';
import { SqliteActions, SqliteKnowledge } from './memory.js';
import { migrate } from './migrate.js';
import { openProblem } from './open-errors.js';
import { SqlitePeople } from './people.js';
import { SqliteRooms } from './rooms.js';
import { SqliteSpend } from './spend.js';
import { SqliteSummaries } from './summaries.js';
import { SqliteToolJournal } from './tool-journal.js';
import { SqliteUsage } from './usage.js';

export interface SqliteOptions {
  /** When notes are written (ms since the epoch). */
  readonly clock?: (() => number) | undefined;
  /** Where a store problem that does not stop it is told (sqlite-vec not loading). */
  readonly log?: Logger | undefined;
  /** sqlite-vec's index for recall (default: on where the extension loads; off: every search is a scan). */
  readonly vectorIndex?: boolean | undefined;
}

/** The embedded store: one SQLite file (WAL), migrated on open. */
export class SqliteStore implements StorePort {
  readonly rooms: SqliteRooms;
  readonly tools: SqliteToolJournal;
  readonly usage: SqliteUsage;
  readonly knowledge: SqliteKnowledge;
  readonly actions: SqliteActions;
  readonly embeddings: SqliteEmbeddings;
  readonly chats: SqliteChats;
  readonly spend: SqliteSpend;
  readonly people: SqlitePeople;
  readonly access: SqliteAccess;
  readonly summaries: SqliteSummaries;
  /** The SQLite handle (its own tools and tests may use it; the bridge goes through the port). */
  readonly db: Database.Database;

  constructor(file: string, options: SqliteOptions = {}) {
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const db = new Database(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
      migrate(db);
    } catch (error) {
      db.close();
      throw file === ':memory:' ? error : openProblem(file, error);
    }
    this.db = db;
    this.rooms = new SqliteRooms(db, options.clock ?? Date.now);
    this.tools = new SqliteToolJournal(db);
    this.usage = new SqliteUsage(db);
    this.knowledge = new SqliteKnowledge(db);
    this.actions = new SqliteActions(db);
    this.embeddings = new SqliteEmbeddings(db, { log: options.log, vectorIndex: options.vectorIndex !== false });
    this.chats = new SqliteChats(db);
    this.spend = new SqliteSpend(db);
    this.people = new SqlitePeople(db);
    this.access = new SqliteAccess(db);
    this.summaries = new SqliteSummaries(db);
  }

  /** A real write (the header's user_version, rewritten unchanged): a full disk or a read-only file shows. */
  async ping(): Promise<void> {
    const version = Number(this.db.pragma('user_version', { simple: true }));
    this.db.pragma(`user_version = ${version}`);
  }

  async close(): Promise<void> {
    // Usage that waits for its write is written first.
    this.usage.flush();
    if (this.db.open) this.db.close();
  }
}

/** Opens (creating and migrating when needed) the SQLite store at `file` (`:memory:` for one in memory). */
export function openStore(file: string, options?: SqliteOptions): SqliteStore {
  return new SqliteStore(file, options);
}
