/**
 * The Postgres connection pool and the two ways the store talks through it: one statement (on any pooled
 * connection, a transaction of its own) or a transaction on one connection. Every statement with a fixed text is a
 * named prepared statement, parsed once per connection.
 */
import pg from 'pg';
import { RoundtableError } from '../../errors.js';
import { redactUrl } from '../../secrets.js';

/** What runs a statement: the pool (one statement, committed on its own) or a connection inside a transaction. */
export interface Sql {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
}

/** A statement with a fixed text, prepared once per connection under its name. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export const statement = (name: string, text: string): Statement => ({ name: `roundtable.${name}`, text });

/** Runs a statement; resolves with its rows (typed as the statement's columns are). */
export async function rows<R>(sql: Sql, query: Statement, values: readonly unknown[] = []): Promise<R[]> {
  return (await sql.query({ name: query.name, text: query.text, values: [...values] })).rows as R[];
}

/** Runs a statement; resolves with how many rows it wrote. */
export async function run(sql: Sql, query: Statement, values: readonly unknown[] = []): Promise<number> {
  return (await sql.query({ name: query.name, text: query.text, values: [...values] })).rowCount ?? 0;
}

/**
 * bigint columns come back as numbers: the store keeps times in milliseconds and row ids, all far below 2^53. A value
 * that is not a safe integer fails the query rather than come back rounded.
 */
function int8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`a bigint the store read (${text}) is not a safe integer`);
  return value;
}

const INT8_OID = 20;

/** How long the store waits on the database before a statement fails (and the room holds and tries again). */
export interface PoolTimeouts {
  /** A new connection's start-up (a server that accepts and never answers). */
  readonly connectMs?: number;
  /** A statement the server runs this long is cancelled by the server (a lock held by a session that hangs). */
  readonly statementMs?: number;
  /** A statement whose answer has not come this long fails, and its connection is closed (a partition). */
  readonly readMs?: number;
}

export const DEFAULT_TIMEOUTS = { connectMs: 5_000, statementMs: 15_000, readMs: 20_000 } as const;
/** A dead connection's idle time before TCP keep-alive probes start (the system's default is two hours). */
const KEEP_ALIVE_AFTER_MS = 10_000;
/** No read timeout, for the statements that may wait long on purpose (migrations, and their lock). */
export const NO_READ_TIMEOUT = 2 ** 31 - 1;

export interface PoolOptions {
  /** Connections at most (pg's default: 10). */
  readonly max?: number;
  /** By default DEFAULT_TIMEOUTS. */
  readonly timeouts?: PoolTimeouts;
  /**
   * A connection's error (the server restarted, the network dropped it, its backend was ended), idle or handed out:
   * reported, never thrown. The connection is closed; the pool opens another for the next statement.
   */
  readonly onError?: (error: Error) => void;
}

/** A pool over `url`; nothing connects until the first statement. */
export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const types = new pg.TypeOverrides();
  types.setTypeParser(INT8_OID, int8);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const pool = new pg.Pool({
    connectionString: url,
    types,
    max: options.max ?? 10,
    application_name: 'roundtable',
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    query_timeout: timeouts.readMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEP_ALIVE_AFTER_MS,
  });
  // Without a listener, an idle connection's error would end the process (`borrow` reports a held one's here too).
  pool.on('error', (error) => options.onError?.(error));
  return pool;
}

/** A connection taken from the pool for several statements; `release` gives it back (or closes it). */
export interface Borrowed {
  readonly client: pg.PoolClient;
  /** Back to the pool; closed instead when `error` is given or the connection failed while held. */
  release(error?: Error): void;
}

/**
 * Takes a connection from the pool for several statements. pg leaves a handed-out connection without an 'error'
 * listener (the pool's is for idle ones), so a drop while it is held (between two statements of a transaction, or
 * during one: pg emits 'error' after failing the statement) would end the process; here it is kept, told to the
 * pool's listener, and the connection is closed at release rather than handed out again.
 */
export async function borrow(pool: pg.Pool): Promise<Borrowed> {
  const client = await pool.connect();
  let failed: Error | undefined;
  const onError = (error: Error) => {
    failed ??= error;
    pool.emit('error', error, client);
  };
  client.on('error', onError);
  return {
    client,
    release: (error) => {
      client.off('error', onError);
      client.release(failed ?? error);
    },
  };
}

/**
 * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws (the error
 * is thrown on). A connection whose rollback failed is closed, never handed out again.
 */
export async function transaction<T>(pool: pg.Pool, work: (tx: Sql) => Promise<T>): Promise<T> {
  const { client, release } = await borrow(pool);
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollback: unknown) => {
      broken = rollback instanceof Error ? rollback : new Error(String(rollback));
    });
    throw error;
  } finally {
    release(broken);
  }
}

/** Why a database cannot be used, in one line naming DATABASE_URL (its password redacted). */
export function unreachable(url: string, error: unknown): RoundtableError {
  const reason = error instanceof Error ? error.message || (error as NodeJS.ErrnoException).code : String(error);
  // The URL reader takes the last "@" as the end of the password; libpq and other tools do not.
  const authority = /^[^:]+:\/\/([^/?#]*)/.exec(url)?.[1] ?? '';
  const hint = authority.split('@').length > 2 ? ' (the user name or password holds an "@": write it as %40)' : '';
  return new RoundtableError('store', `DATABASE_URL: ${redactUrl(url)} cannot be used: ${reason}${hint}`, {
    cause: error,
  });
}
