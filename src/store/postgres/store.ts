import type pg from 'pg';
import type { Logger } from '../../log.js';
import type { StorePort } from '../port.js';
import { PostgresAccess } from './access.js';
import { PostgresChats } from './chats.js';
import { PostgresCommandClaims } from './commands.js';
import { ConnectionWatch } from './connection-watch.js';
import { PostgresEmbeddings } from './embeddings.js';
import { PostgresInbox } from './inbox.js';
import { PostgresLeases } from './leases.js';
import { PostgresActions, PostgresKnowledge } from './memory.js';
import { migratePostgres } from './migrate.js';
import { PostgresPeople } from './people.js';
import { createPool, rows, statement, unreachable } from './pool.js';
import { PostgresReplicas } from './replicas.js';
import { PostgresRequestIds } from './request-ids.js';
import { PostgresRooms } from './rooms.js';
import { PostgresSignals } from './signals.js';
import { PostgresSpend } from './spend.js';
import { PostgresSummaries } from './summaries.js';
import { PostgresToolJournal } from './tool-journal.js';
import { PostgresUsage } from './usage.js';

export interface PostgresOptions {
  /** When notes are written (ms since the epoch). */
  readonly clock?: (() => number) | undefined;
  /** Connections at most (pg's default: 10). */
  readonly maxConnections?: number | undefined;
  /** A connection's error, idle or held (the server restarted, the network dropped it): reported, never thrown. */
  readonly onError?: ((error: Error) => void) | undefined;
  /** Where a dropped connection, and the database answering again, is told (one line each per outage). */
  readonly log?: Logger | undefined;
}

// A real write that changes nothing: a read-only server (a standby, default_transaction_read_only) or a full disk shows.
const PING = statement(
  'ping',
  `UPDATE schema_migrations SET applied_at = applied_at
   WHERE version = (SELECT max(version) FROM schema_migrations) RETURNING version`,
);

/** The server store: one Postgres database (DATABASE_URL) through a connection pool, migrated on open. */
export class PostgresStore implements StorePort {
  readonly rooms: PostgresRooms;
  readonly tools: PostgresToolJournal;
  readonly usage: PostgresUsage;
  readonly knowledge: PostgresKnowledge;
  readonly actions: PostgresActions;
  readonly embeddings: PostgresEmbeddings;
  readonly chats: PostgresChats;
  readonly spend: PostgresSpend;
  readonly people: PostgresPeople;
  readonly access: PostgresAccess;
  readonly summaries: PostgresSummaries;
  /** Room leases, for bridges sharing this database (replicas). */
  readonly leases: PostgresLeases;
  /** Events kept for the bridge serving their room (replicas). */
  readonly inbox: PostgresInbox;
  /** Operator commands claimed once by their platform id (replicas). */
  readonly commands: PostgresCommandClaims;
  /** Wake-ups between the bridges sharing this database (LISTEN/NOTIFY), on a connection of its own. */
  readonly signals: PostgresSignals;
  /** Blocks of request ids, unique across the bridges sharing this database. */
  readonly requestIds: PostgresRequestIds;
  /** The registry of the bridges sharing this database. */
  readonly replicas: PostgresReplicas;
  private closed: Promise<void> | undefined;

  /** Use `openPostgresStore`: the pool given here is migrated already. */
  constructor(
    /** The pool (its own tools and tests may use it; the bridge goes through the port). */
    readonly pool: pg.Pool,
    options: PostgresOptions = {},
    private readonly watch?: ConnectionWatch,
  ) {
    this.rooms = new PostgresRooms(pool, options.clock ?? Date.now);
    this.tools = new PostgresToolJournal(pool);
    this.usage = new PostgresUsage(pool);
    this.knowledge = new PostgresKnowledge(pool);
    this.actions = new PostgresActions(pool);
    this.embeddings = new PostgresEmbeddings(pool);
    this.chats = new PostgresChats(pool);
    this.spend = new PostgresSpend(pool);
    this.people = new PostgresPeople(pool);
    this.access = new PostgresAccess(pool);
    this.summaries = new PostgresSummaries(pool);
    this.leases = new PostgresLeases(pool);
    this.inbox = new PostgresInbox(pool);
    this.commands = new PostgresCommandClaims(pool);
    this.signals = new PostgresSignals(pool.options);
    this.requestIds = new PostgresRequestIds(pool);
    this.replicas = new PostgresReplicas(pool);
  }

  async ping(): Promise<void> {
    if ((await rows(this.pool, PING)).length === 0) throw new Error('the database has no schema_migrations row');
  }

  async close(): Promise<void> {
    this.watch?.stop();
    this.closed ??= this.pool.end();
    await this.closed;
  }
}

/**
 * Opens the store on `url`, applying pending migrations (under an advisory lock: bridges starting together take
 * turns). A database that cannot be reached or used rejects with one line naming DATABASE_URL, its password redacted.
 */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
  let watch: ConnectionWatch | undefined;
  const pool = createPool(url, {
    ...(options.maxConnections !== undefined ? { max: options.maxConnections } : {}),
    onError: (error) => {
      watch?.dropped(error);
      options.onError?.(error);
    },
  });
  try {
    await migratePostgres(pool);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw unreachable(url, error);
  }
  if (options.log) {
    const watching = new ConnectionWatch({ pool, url, log: options.log });
    pool.on('connect', () => watching.connected());
    watch = watching;
  }
  return new PostgresStore(pool, options, watch);
}
