/**
 * A throw-away Postgres cluster for tests and benchmarks: Debian's postgresql binaries (initdb, pg_ctl) run into a
 * temporary folder, on a private port (127.0.0.1) with its socket in that folder, and are removed when stopped. As
 * root, they run as the `postgres` user, who owns the folder. One cluster per test file; a fresh database per test.
 *
 * The cluster's collation is ICU's English (where the server has ICU), as a production database's often is, so SQL
 * that counted on SQLite's byte-by-byte text order would show here.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { isCi } from '../sandbox/docker-setup.js';

const run = promisify(execFile);

/** Where initdb and pg_ctl are: the newest /usr/lib/postgresql/<version>/bin, else the PATH; undefined when absent. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return undefined;
}

export interface PostgresPlan {
  /** Whether the Postgres tests run at all. */
  readonly run: boolean;
  readonly bin?: string;
  /** When they run but cannot pass: why (CI without Postgres). */
  readonly problem?: string;
  /** The one line said when they are skipped. */
  readonly note?: string;
}

const INSTALL = "install Debian's postgresql (apt-get install postgresql)";

/** Outside CI, without Postgres the Postgres tests are skipped with one line; with CI=true they must run. */
export function postgresPlan(ci = isCi(process.env.CI), bin = findPostgresBin()): PostgresPlan {
  if (bin) return { run: true, bin };
  if (ci)
    return { run: true, problem: `CI is set, so the Postgres tests must run, but initdb was not found: ${INSTALL}` };
  return { run: false, note: `Postgres tests skipped: initdb was not found (${INSTALL}; CI=true makes them required)` };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const asRoot = process.getuid?.() === 0;

/** A command as the cluster's owner: `postgres` when we are root (initdb refuses root). */
function owned(file: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export interface TestDatabaseUrl {
  readonly name: string;
  readonly url: string;
}

export interface PostgresCluster {
  readonly port: number;
  /** The URL of one of the cluster's databases, as DATABASE_URL takes it. */
  url(database: string, credentials?: string): string;
  /** A fresh database: empty, or a copy of `from` (a database filled once, such as a migrated one). */
  createDatabase(options?: { from?: string }): Promise<TestDatabaseUrl>;
  /** Drops a database, closing whatever is still connected to it. */
  dropDatabase(name: string): Promise<void>;
  /** Stops the server (an outage: `pg_ctl stop -m fast`), keeping its data and port for `resume()`. */
  pause(): Promise<void>;
  /** Starts the paused server again on the same port. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** Server settings for speed: a throw-away cluster needs no durability. */
export const FAST = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } as const;

/**
 * Starts a cluster. `settings` are server settings (`-c name=value`); by default `FAST`. Throws with the server's
 * log when it does not come up.
 */
export async function startCluster(
  options: { bin?: string; settings?: Readonly<Record<string, string>> } = {},
): Promise<PostgresCluster> {
  const bin = options.bin ?? findPostgresBin();
  if (!bin) throw new Error(`initdb was not found: ${INSTALL}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-pg-'));
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  if (asRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const initdb = path.join(bin, 'initdb');
  const pgCtl = path.join(bin, 'pg_ctl');
  const base = ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'];
  try {
    await run(...owned(initdb, [...base, '--locale=C.UTF-8', '--locale-provider=icu', '--icu-locale=en']));
  } catch {
    // A server without ICU (or older than 15): its default collation.
    rmSync(data, { recursive: true, force: true });
    await run(...owned(initdb, base));
  }
  const settings = { ...FAST, ...options.settings };
  const flags = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`);
  let port = 0;
  const startServer = () => {
    const server = [`-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', ...flags].join(' ');
    return run(...owned(pgCtl, ['-D', data, '-l', log, '-o', server, '-w', '-t', '120', 'start']));
  };
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await startServer();
      break;
    } catch (error) {
      // The port may have been taken between finding it free and the server binding it.
      if (attempt >= 3) {
        const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '';
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`the test Postgres did not start: ${(error as Error).message}\n${tail}`);
      }
    }
  }
  const stopSync = () => {
    try {
      execFileSync(...owned(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
    } catch {
      // Already stopped.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // A test process that ends without its afterAll (a crash, a timeout) leaves no server behind.
  process.once('exit', stopSync);

  const url = (database: string, credentials = 'postgres') => `postgres://${credentials}@127.0.0.1:${port}/${database}`;
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: url('postgres') });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  let databases = 0;
  return {
    port,
    url,
    createDatabase: async (options = {}) => {
      const name = `rt_${process.pid}_${++databases}`;
      // FILE_COPY: copying a small database's files is quicker than logging every page of it.
      await admin((client) =>
        client.query(`CREATE DATABASE ${name} TEMPLATE ${options.from ?? 'template0'} STRATEGY FILE_COPY`),
      );
      return { name, url: url(name) };
    },
    dropDatabase: async (name) => {
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
    pause: async () => {
      await run(...owned(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop']));
    },
    resume: async () => {
      await startServer();
    },
    stop: async () => {
      process.removeListener('exit', stopSync);
      await run(...owned(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop'])).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
