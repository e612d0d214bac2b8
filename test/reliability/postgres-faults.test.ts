/**
 * The bridge as a real process on Postgres, connected to the Discord fake, through a TCP proxy to its database
 * (test/helpers/fault-proxy.ts): its connections are cut three ways while it serves a room, each time while one of
 * them is held in a transaction (a connection the pool has handed out, where an unhandled 'error' would end the
 * process): every backend of the bridge ended by `pg_terminate_backend`, every socket reset by the proxy (which then
 * refuses connections for a while), and the server stopped for a few seconds and started again. The process stays
 * up, a question asked after each fault is answered once, and the log says the connections dropped and came back,
 * the URL's password redacted. A throw-away cluster for this file; outside CI, without Postgres, one line and skipped.
 * PG_FAULTS_TEST_LOG=1 keeps the bridge's log and prints where.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/index.js';
import { type FakeOpenAI, type RecordedRequest, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type BridgeChild, startBridgeChild } from '../helpers/bridge-child.js';
import { type FaultProxy, startFaultProxy } from '../helpers/fault-proxy.js';
import { roomMessagesOf } from '../helpers/harness.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';

const KEEP = Boolean(process.env.PG_FAULTS_TEST_LOG);
/** Any password is taken (the cluster trusts local connections): the log must never show it. */
const PASSWORD = 'pw-never-logged-7f3a';
/** Generous: a busy machine, a bridge waiting out its backoff after the fault. */
const ANSWER_WITHIN_MS = 90_000;

const pgSuite = migratedPostgres();

/** `code`, the control bot on Discord, answering when mentioned; returns the agents folder. */
function writeDiscordAgent(dir: string): string {
  const agents = path.join(dir, 'agents');
  mkdirSync(agents);
  const card = ['---', 'name: code', 'model: fake', 'activation: mention', 'tools: []'];
  card.push('discord: { token_env: DISCORD_TOKEN_CODE, control: true }', '---', 'You answer questions.');
  writeFileSync(path.join(agents, 'code.md'), card.join('\n'));
  return agents;
}

/**
 * The question a model request answers: the oldest human line with a marker (`question q3`) that the agent's own lines
 * have not answered yet (two questions stored together, after a fault, are answered in turn).
 */
function questionOf(request: RecordedRequest): string | undefined {
  const asked: string[] = [];
  const answered = new Set<string>();
  for (const m of roomMessagesOf(request)) {
    const marker = /(?:question|re:) (q\d+)/.exec(String(m.content))?.[1];
    if (!marker) continue;
    if (m.role === 'user') asked.push(marker);
    else answered.add(marker);
  }
  return asked.find((marker) => !answered.has(marker));
}

describe.runIf(pgSuite.plan.run)('Postgres connections cut under a running bridge (a real process)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-pg-faults-'));
  let discord: FakeDiscord | undefined;
  let llm: FakeOpenAI | undefined;
  let proxy: FaultProxy | undefined;
  let child: BridgeChild | undefined;
  let database: string | undefined;
  afterAll(async () => {
    await child?.stop('SIGKILL');
    await proxy?.close();
    await llm?.close();
    await discord?.close();
    if (database) await pgSuite.cluster().dropDatabase(database);
    if (KEEP) console.log(`postgres faults test: log kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });

  it('stays up through terminated backends, reset sockets and a stopped server, and answers each later question once', async () => {
    const cluster = pgSuite.cluster();
    const created = await cluster.createDatabase({ from: pgSuite.migrated() });
    database = created.name;
    /** One statement on a connection of the test's own (opened each time: a fault ends it too). */
    const admin = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> => {
      const client = new pg.Client({ connectionString: created.url });
      client.on('error', () => undefined);
      await client.connect();
      try {
        return (await client.query<R>(text, values)).rows;
      } finally {
        await client.end().catch(() => undefined);
      }
    };

    discord = await startFakeDiscord({ bots: [{ token: 'tok-code', name: 'code-bot' }], channels: ['general'] });
    const bot = discord.bot('code-bot');
    llm = await startFakeOpenAI();
    llm.respond((request) => ({ content: `re: ${questionOf(request) ?? 'nothing'}`, delayMs: 100 }));
    proxy = await startFaultProxy({ host: '127.0.0.1', port: cluster.port });
    const logFile = path.join(dir, 'bridge.log');
    child = startBridgeChild({
      PATH: process.env.PATH ?? '',
      ROUNDTABLE_CWD: dir,
      AGENTS_DIR: writeDiscordAgent(dir),
      DATA_DIR: path.join(dir, 'data'),
      LOG_FILE: logFile,
      LOG_LEVEL: KEEP ? 'debug' : 'info',
      DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:${proxy.port}/${created.name}`,
      REPLICA_ID: 'a',
      ROOM_LEASE_S: '30',
      OPENAI_BASE_URL: llm.baseURL,
      OPENAI_API_KEY: 'test-key',
      LLM_MAX_RETRIES: '0',
      LLM_TIMEOUT_S: '20',
      DISCORD_API_URL: discord.apiURL,
      DISCORD_TOKEN_CODE: 'tok-code',
    });
    const running = child;
    if (!(await running.ready)) throw new Error(`the bridge did not start: ${running.stderr()}`);

    const answersTo = (marker: string) =>
      (discord?.botMessages('general') ?? []).filter((m) => m.content.trim() === `re: ${marker}`).length;
    /** Polls `predicate`; fails at once, with its stderr, when the bridge has exited. */
    const within = async (ms: number, what: string, predicate: () => boolean | Promise<boolean>) => {
      const deadline = Date.now() + ms;
      while (!(await predicate())) {
        if (running.exited()) throw new Error(`the bridge exited while waiting for ${what}:\n${running.stderr()}`);
        if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
        await sleep(50);
      }
    };
    let asked = 0;
    const ask = () => {
      const marker = `q${++asked}`;
      discord?.humanSays('general', 'alice', `<@${bot.id}> question ${marker}`);
      return marker;
    };
    const answeredOnce = async (what: string) => {
      const marker = ask();
      await within(ANSWER_WITHIN_MS, `${marker} answered (${what})`, () => answersTo(marker) > 0);
    };
    await answeredOnce('before any fault');

    // 1. Every backend of the bridge ended while one of its connections waits, in a transaction, on a lock the test
    // holds: the connection the pool handed out is the one ended.
    const locker = new pg.Client({ connectionString: created.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE messages IN SHARE ROW EXCLUSIVE MODE');
    const lockedOut = ask();
    const inTransaction = () =>
      admin(
        `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'
         AND application_name LIKE 'roundtable%' AND xact_start < query_start`,
        [created.name],
      );
    await within(30_000, 'a connection of the bridge waiting in a transaction', async () => {
      return (await inTransaction()).length > 0;
    });
    const ended = await admin<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'roundtable%'
       AND pg_terminate_backend(pid)`,
      [created.name],
    );
    await locker.query('ROLLBACK');
    await locker.end();
    expect(ended.length).toBeGreaterThan(0);
    await answeredOnce(`after ${ended.length} backends were terminated`);

    // 2. Every socket reset by the proxy as a transaction begins; new connections refused for 3 s, then accepted.
    const cut = proxy.cutAfter('BEGIN');
    const cutMidTransaction = ask();
    const sockets = await cut;
    await sleep(3_000);
    proxy.accept();
    await answeredOnce(`after ${sockets} connections were reset`);

    // 3. The server stopped for 4 s (every connection ends, new ones are refused) and started again.
    await cluster.pause();
    const duringOutage = ask();
    await sleep(4_000);
    await cluster.resume();
    await answeredOnce('after the server was stopped for 4 s');

    expect(running.exited()).toBe(false);
    // Nothing answered twice; the questions asked into a fault are answered too, once.
    for (const marker of [lockedOut, cutMidTransaction, duringOutage]) {
      await within(ANSWER_WITHIN_MS, `${marker} answered`, () => answersTo(marker) > 0);
    }
    for (let n = 1; n <= asked; n++) expect(answersTo(`q${n}`), `q${n}`).toBe(1);

    const log = readFileSync(logFile, 'utf8');
    expect(log).not.toContain(PASSWORD);
    // One line when connections drop and one when they are back, per fault (not one per connection or per try).
    const count = (pattern: RegExp) => log.split('\n').filter((line) => pattern.test(line)).length;
    const where = `postgres://\\[redacted\\]@127\\.0\\.0\\.1:${proxy.port}/${created.name}`;
    for (const [what, pattern] of [
      ['the pool', new RegExp(`the database connection to ${where} dropped`)],
      ['the pool', new RegExp(`the database connections to ${where} are back`)],
      ['the listener', new RegExp(`the store listening connection to ${where} dropped`)],
      ['the listener', new RegExp(`the store listening connection to ${where} is back`)],
    ] as const) {
      expect(count(pattern), `${what}: ${pattern}`).toBeGreaterThanOrEqual(1);
      expect(count(pattern), `${what}: ${pattern}`).toBeLessThanOrEqual(3);
    }
  }, 600_000);
});
