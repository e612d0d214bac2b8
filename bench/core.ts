/**
 * Core benchmarks: router decisions per second and messages per second stored through the bridge,
 * each beside a baseline measured in the same run, printed as a ratio, and judged against its goal:
 *  - store: the bridge at least 0.8x a bare better-sqlite3 INSERT loop on the same schema and connection settings;
 *  - Postgres store (DATABASE_URL): the bridge at least 0.6x a bare pg INSERT loop (one awaited INSERT per message) on
 *    the same schema, on a throw-away cluster of this machine's postgresql (one line says so when it is missing);
 *  - router: a whole decision of the room machine (reading, wakes, queue, writes) in under a third of the time the
 *    bridge takes to store one message (routing never limits a room).
 *   npm run bench -- core [--smoke]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createBridge } from '../src/bridge/index.js';
import { silentLogger } from '../src/log.js';
import type { AdapterSink, ChatAdapter } from '../src/ports.js';
import { decide } from '../src/room/decide.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../src/room/state.js';
import type { StorePort } from '../src/store/index.js';
import { migrate, openStore } from '../src/store/index.js';
import { openPostgresStore } from '../src/store/postgres/store.js';
import { testConfig } from '../test/helpers/config.js';
import { findPostgresBin, startCluster } from '../test/helpers/postgres.js';
import { isCi } from '../test/sandbox/docker-setup.js';
import { reportGoal } from './lib/goals.js';
import { sized } from './lib/mode.js';

const DECISIONS = sized(200_000, 20_000);
const ROUNDS = sized(9, 3);
const PER_ROUND = sized(10_000, 1_000);
/** Each Postgres message is a round trip: fewer per round keep the run within minutes on a busy machine. */
const PG_PER_ROUND = sized(3_000, 300);

function rate(label: string, count: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(1000, count); i++) fn(i); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) fn(i);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const perSecond = count / seconds;
  console.log(
    `  ${label.padEnd(46)} ${Math.round(perSecond).toLocaleString('en-US').padStart(12)} /s  (${count} in ${seconds.toFixed(3)} s)`,
  );
  return perSecond;
}

function routerBench(): number {
  const agents = Array.from({ length: 10 }, (_, i) => ({
    name: `agent${i}`,
    activation: (i % 3 === 0 ? 'always' : 'mention') as 'always' | 'mention',
  }));
  const setup: RoomSetup = {
    key: 'bench:room',
    agents,
    turnLimit: 20,
    kind: 'room',
    privacy: 'off',
    requestTimeoutMs: 600_000,
    editWindowMs: 120_000,
    maxToolRounds: 25,
    batching: false,
  };
  const names = agents.map((a) => a.name);
  const texts = Array.from({ length: 64 }, (_, i) => `@${names[(i * 3) % 10]} message ${i}`);
  let state: RoomState = EMPTY_STATE;
  let at = 0;
  console.log('Router: decide() on a human message in a room of 10 agents (each decision from the settled room)');
  const baseline = rate('baseline: filter agents by mention only', DECISIONS, (i) => {
    const text = texts[i % 64] ?? '';
    agents.filter((a) => a.activation === 'always' || text.includes(`@${a.name}`));
  });
  const router = rate('router: decide() (reading, wakes, queue, writes)', DECISIONS, (i) => {
    at++;
    const decision = decide(
      setup,
      state,
      {
        type: 'message',
        now: at,
        message: {
          author: 'user',
          authorId: 'u',
          kind: 'human',
          text: texts[i % 64] ?? '',
          platformIds: [`p${at}`],
          at,
        },
      },
      { nextRequestId: 1 },
    );
    // The room settles between messages: what it asked for is dropped, so each decision meets the same room.
    state = { ...decision.state, queue: [], current: null, posts: [] };
  });
  console.log(
    `  ratio router/baseline: ${(router / baseline).toFixed(2)}  (decisions per second relative to the bare filter)\n`,
  );
  return router;
}

/** Resolves with the bridge's median store rate (messages per second). */
async function storeBench(): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rt-bench-'));
  const rounds = ROUNDS;
  const perRound = PER_ROUND;
  try {
    console.log(
      `Store: ${rounds} alternating rounds of ${perRound} human messages (no agent wakes), median rate of each side;`,
    );
    console.log(
      `  SQLite files in ${tmpdir()}, WAL, synchronous=NORMAL, foreign_keys=ON, same schema (migrations applied) on both sides`,
    );
    // Baseline: the same schema, one bare prepared INSERT per message.
    const db = new Database(path.join(dir, 'bare.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // The store's connection settings: its schema's foreign keys are enforced on both sides.
    db.pragma('foreign_keys = ON');
    migrate(db);
    db.prepare("INSERT INTO channels (platform, channel, created_at) VALUES ('bench', 'room', 0)").run();
    const insert = db.prepare(
      `INSERT INTO messages (channel_id, platform_message_id, author, author_id, kind, content, mentions, created_at)
       VALUES (1, ?, 'user', 'u1', 'human', ?, '[]', ?)`,
    );

    // The bridge: receive -> dedupe -> store -> route, for a room of three mention-only agents.
    const store = openStore(path.join(dir, 'bridge.db'));
    const { bridge, sink } = await benchBridge(store);

    let n = 0;
    const baseRates: number[] = [];
    const bridgeRates: number[] = [];
    for (let round = 0; round < rounds; round++) {
      let start = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) {
        n++;
        insert.run(`m${n}`, `message number ${n}`, Date.now());
      }
      baseRates.push(perRound / (Number(process.hrtime.bigint() - start) / 1e9));
      start = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) {
        n++;
        await sink.receive({
          platform: 'bench',
          channel: 'room',
          messageId: `m${n}`,
          author: { id: 'u1', name: 'user', kind: 'human' },
          text: `message number ${n}`,
        });
      }
      await bridge.idle();
      bridgeRates.push(perRound / (Number(process.hrtime.bigint() - start) / 1e9));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const show = (label: string, values: number[]) =>
      console.log(
        `  ${label.padEnd(46)} ${Math.round(median(values)).toLocaleString('en-US').padStart(12)} /s  (rounds: ${values.map((v) => Math.round(v)).join(', ')})`,
      );
    show('baseline: bare better-sqlite3 INSERT loop', baseRates);
    show('bridge: receive -> dedupe -> store -> route', bridgeRates);
    const ratio = median(bridgeRates) / median(baseRates);
    console.log(`  ratio bridge/baseline: ${ratio.toFixed(2)}`);
    reportGoal({
      figure: `store: ${ratio.toFixed(2)}x of a bare better-sqlite3 INSERT loop`,
      goal: '>= 0.8x',
      met: ratio >= 0.8,
      how: `medians of ${rounds} alternating rounds of ${perRound.toLocaleString('en-US')} messages each, same schema, in this run`,
    });
    await bridge.stop();
    await store.close();
    db.close();
    return median(bridgeRates);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A bridge over `store` for a room of three mention-only agents, and the sink its adapter receives messages through. */
async function benchBridge(store: StorePort) {
  let sink: AdapterSink | undefined;
  const adapter: ChatAdapter = {
    platform: 'bench',
    start: async (s) => {
      sink = s;
    },
    stop: async () => {},
    post: async () => ({ messageIds: [] }),
  };
  const config = testConfig({
    agents: Array.from({ length: 3 }, (_, i) => ({ name: `agent${i}`, activation: 'mention' as const })),
  });
  const sandbox = { exec: async () => ({ output: '', exitCode: 0, timedOut: false }), close: async () => {} };
  const bridge = createBridge({ config, store, sandbox, adapters: [adapter], logger: silentLogger() });
  await bridge.start();
  if (!sink) throw new Error('the bench adapter was not started');
  return { bridge, sink };
}

/** The same measure on Postgres: the bridge against a bare pg loop, one awaited INSERT per message. */
async function postgresBench(): Promise<void> {
  const bin = findPostgresBin();
  if (!bin) {
    const line =
      'Postgres store: not measured: this machine has no postgresql (initdb not found; apt-get install postgresql)';
    if (isCi(process.env.CI)) throw new Error(`${line}; CI=true makes it required`);
    console.log(line);
    return;
  }
  const rounds = ROUNDS;
  const perRound = PG_PER_ROUND;
  // Like SQLite's synchronous=NORMAL: a commit does not wait for its WAL to reach the disk.
  const settings = { fsync: 'on', full_page_writes: 'on', synchronous_commit: 'off' };
  const cluster = await startCluster({ bin, settings });
  try {
    console.log(
      `\nPostgres store: ${rounds} alternating rounds of ${perRound} human messages (no agent wakes), median rate of each side;`,
    );
    console.log(
      `  a throw-away cluster of ${bin} on 127.0.0.1 (TCP), synchronous_commit=off, same schema (migrations applied) on both sides`,
    );
    const bareDb = await cluster.createDatabase();
    await (await openPostgresStore(bareDb.url)).close();
    const client = new pg.Client({ connectionString: bareDb.url });
    await client.connect();
    await client.query("INSERT INTO channels (platform, channel, created_at) VALUES ('bench', 'room', 0)");
    const insert = {
      name: 'bench-insert',
      text: `INSERT INTO messages (channel_id, platform_message_id, author, author_id, kind, content, mentions, created_at)
             VALUES (1, $1, 'user', 'u1', 'human', $2, '[]', $3)`,
    };
    const store = await openPostgresStore((await cluster.createDatabase()).url);
    const { bridge, sink } = await benchBridge(store);
    let n = 0;
    const baseRates: number[] = [];
    const bridgeRates: number[] = [];
    for (let round = 0; round < rounds; round++) {
      let start = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) {
        n++;
        await client.query({ ...insert, values: [`m${n}`, `message number ${n}`, Date.now()] });
      }
      baseRates.push(perRound / (Number(process.hrtime.bigint() - start) / 1e9));
      start = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) {
        n++;
        await sink.receive({
          platform: 'bench',
          channel: 'room',
          messageId: `m${n}`,
          author: { id: 'u1', name: 'user', kind: 'human' },
          text: `message number ${n}`,
        });
      }
      await bridge.idle();
      bridgeRates.push(perRound / (Number(process.hrtime.bigint() - start) / 1e9));
    }
    show('baseline: bare pg INSERT loop', baseRates);
    show('bridge: receive -> dedupe -> store -> route', bridgeRates);
    const ratio = median(bridgeRates) / median(baseRates);
    console.log(`  ratio bridge/baseline: ${ratio.toFixed(2)}`);
    reportGoal({
      figure: `Postgres store: ${ratio.toFixed(2)}x of a bare pg INSERT loop`,
      goal: '>= 0.6x',
      met: ratio >= 0.6,
      how: `medians of ${rounds} alternating rounds of ${perRound.toLocaleString('en-US')} messages each, same schema, one cluster, in this run`,
    });
    await bridge.stop();
    await store.close();
    await client.end();
  } finally {
    await cluster.stop();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const show = (label: string, values: number[]) =>
  console.log(
    `  ${label.padEnd(46)} ${Math.round(median(values)).toLocaleString('en-US').padStart(12)} /s  (rounds: ${values.map((v) => Math.round(v)).join(', ')})`,
  );

const router = routerBench();
const stored = await storeBench();
await postgresBench();
reportGoal({
  figure: `router: ${Math.round(router).toLocaleString('en-US')} decisions/s, ${(router / stored).toFixed(1)}x the bridge's store rate`,
  goal: '>= 3x the store rate',
  met: router >= 3 * stored,
  how: `decide() on a human message waking agents in a room of 10 (4 always), ${DECISIONS.toLocaleString('en-US')} decisions, beside the store rate above`,
});
