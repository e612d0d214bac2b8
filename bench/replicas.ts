/**
 * Replicas: bridges sharing one Postgres store, in this process, on one in-memory platform every replica receives
 * (as Discord delivers each message to every session), 20 rooms, a model answering after 200 ms. Measures messages per
 * second and the latency the bridge adds (answer time less the model's 200 ms) with a single SQLite bridge, one
 * replica and two replicas, in the same run; then the time a room takes to move after its replica dies (cut off from
 * the platform and the database, its leases left to lapse, ROOM_LEASE_S=3).
 *   npm run bench -- replicas [--smoke]
 */
import { createBridge } from '../src/bridge/index.js';
import { silentLogger } from '../src/log.js';
import type { StorePort } from '../src/store/index.js';
import { openStore } from '../src/store/index.js';
import { openPostgresStore } from '../src/store/postgres/store.js';
import { FakeSandbox } from '../test/fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test/fakes/openai-server/index.js';
import { testConfig } from '../test/helpers/config.js';
import { findPostgresBin, type PostgresCluster, startCluster } from '../test/helpers/postgres.js';
import { SharedPlatform } from '../test/helpers/shared-platform.js';
import { isCi } from '../test/sandbox/docker-setup.js';
import { reportGoal } from './lib/goals.js';
import { sized } from './lib/mode.js';

const ROOMS = 20;
const PER_ROOM = sized(10, 3);
const MODEL_MS = 200;
const LEASE_S = 3;

interface Run {
  readonly rate: number;
  readonly addedP50: number;
  readonly addedP99: number;
  readonly lost: number;
  readonly doubled: number;
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;

/** Answers every room's messages one after another, the rooms at once; when each answer came. */
async function converse(platform: SharedPlatform, rooms: string[], perRoom: number) {
  const waits: number[] = [];
  const started = performance.now();
  await Promise.all(
    rooms.map(async (room) => {
      for (let i = 0; i < perRoom; i++) {
        const before = platform.answers(room).length;
        const sent = performance.now();
        platform.say(room, `@data question ${i} in ${room}`);
        while (platform.answers(room).length <= before) await new Promise((resolve) => setTimeout(resolve, 2));
        waits.push(performance.now() - sent - MODEL_MS);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, waits };
}

function tally(platform: SharedPlatform, rooms: string[], expected: number) {
  let lost = 0;
  let doubled = 0;
  for (const room of rooms) {
    const answers = platform.answers(room).length;
    if (answers < expected) lost += expected - answers;
    if (answers > expected) doubled += answers - expected;
  }
  return { lost, doubled };
}

/** `replicas` bridges (none: one SQLite bridge) conversing in every room. */
async function measure(llm: FakeOpenAI, stores: () => Promise<StorePort>, replicas: string[]): Promise<Run> {
  const platform = new SharedPlatform();
  const running = [];
  for (const replica of replicas) {
    running.push(await startReplica(llm, platform, replica, await stores()));
  }
  const rooms = Array.from({ length: ROOMS }, (_, i) => `room${i}`);
  const { seconds, waits } = await converse(platform, rooms, PER_ROOM);
  await Promise.all(running.map(({ bridge }) => bridge.idle()));
  const result = { rate: (ROOMS * PER_ROOM) / seconds, ...tally(platform, rooms, PER_ROOM) };
  for (const { bridge, store } of running) {
    await bridge.stop();
    await store.close();
  }
  return { ...result, addedP50: percentile(waits, 0.5), addedP99: percentile(waits, 0.99) };
}

/** One bridge named `replica` on `store`, with one `mention` agent, started on the shared platform. */
async function startReplica(
  llm: FakeOpenAI,
  platform: SharedPlatform,
  replica: string,
  store: StorePort,
): Promise<{ bridge: ReturnType<typeof createBridge>; store: StorePort }> {
  const config = testConfig({
    agents: [{ name: 'data', activation: 'mention' }],
    env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', REPLICA_ID: replica, ROOM_LEASE_S: String(LEASE_S) },
  });
  const bridge = createBridge({
    config,
    store,
    sandbox: new FakeSandbox(),
    adapters: [platform.adapter(replica)],
    logger: silentLogger(),
  });
  await bridge.start();
  return { bridge, store };
}

/** Two replicas; the one holding most rooms dies; how long until each of its rooms answers again. */
async function move(llm: FakeOpenAI, url: string): Promise<{ moveMs: number; lost: number; doubled: number }> {
  const platform = new SharedPlatform();
  const running = new Map<string, { bridge: ReturnType<typeof createBridge>; store: StorePort }>();
  for (const replica of ['a', 'b']) {
    running.set(replica, await startReplica(llm, platform, replica, await openPostgresStore(url)));
  }
  const rooms = Array.from({ length: ROOMS }, (_, i) => `room${i}`);
  await converse(platform, rooms, 1);
  const held = (replica: string) => running.get(replica)?.bridge.leases?.held ?? 0;
  const victim = held('a') >= held('b') ? 'a' : 'b';
  const survivor = victim === 'a' ? 'b' : 'a';
  const moved = rooms.filter((room) => platform.posts.some((p) => p.channel === room && p.by === victim));
  // It dies: nothing reaches it, and it reaches no database (its leases lapse unrenewed).
  platform.detach(victim);
  await running.get(victim)?.store.close();
  const diedAt = performance.now();
  for (const room of moved) platform.say(room, `@data after the move in ${room}`);
  while (!moved.every((room) => platform.answers(room).length >= 2)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const moveMs = performance.now() - diedAt;
  await running.get(survivor)?.bridge.idle();
  const counts = tally(platform, moved, 2);
  for (const { bridge, store } of running.values()) {
    await bridge.stop();
    await store.close();
  }
  return { moveMs, ...counts };
}

async function main(): Promise<void> {
  const bin = findPostgresBin();
  if (!bin) {
    const line =
      'replicas: not measured: this machine has no postgresql (initdb not found; apt-get install postgresql)';
    if (isCi(process.env.CI)) throw new Error(`${line}; CI=true makes it required`);
    console.log(line);
    return;
  }
  const llm = await startFakeOpenAI();
  llm.respond(() => ({ content: 'on it', delayMs: MODEL_MS }));
  let cluster: PostgresCluster | undefined;
  try {
    cluster = await startCluster({ bin, settings: { fsync: 'on', full_page_writes: 'on', synchronous_commit: 'off' } });
    const pg = cluster;
    const fresh = async () => (await pg.createDatabase()).url;
    console.log(
      `Replicas: ${ROOMS} rooms, ${PER_ROOM} messages each (one after another per room, the rooms at once), a ${MODEL_MS} ms model;`,
    );
    console.log('  one in-memory platform every replica receives; Postgres: a throw-away cluster on 127.0.0.1');
    const sqlite = await measure(llm, async () => openStore(':memory:'), ['solo']);
    const oneUrl = await fresh();
    const one = await measure(llm, () => openPostgresStore(oneUrl), ['a']);
    const twoUrl = await fresh();
    const two = await measure(llm, () => openPostgresStore(twoUrl), ['a', 'b']);
    const show = (label: string, run: Run) =>
      console.log(
        `  ${label.padEnd(30)} ${run.rate.toFixed(1).padStart(7)} messages/s, added p50 ${run.addedP50.toFixed(1)} ms, p99 ${run.addedP99.toFixed(1)} ms, lost ${run.lost}, doubled ${run.doubled}`,
      );
    show('SQLite, one bridge', sqlite);
    show('Postgres, one replica', one);
    show('Postgres, two replicas', two);
    const moved = await move(llm, await fresh());
    console.log(
      `  move after a replica dies: ${(moved.moveMs / 1000).toFixed(1)} s (ROOM_LEASE_S=${LEASE_S}), lost ${moved.lost}, doubled ${moved.doubled}`,
    );
    const exact = [sqlite, one, two, moved].every((run) => run.lost === 0 && run.doubled === 0);
    reportGoal({
      figure: `two replicas: ${two.rate.toFixed(1)} messages/s (one: ${one.rate.toFixed(1)}, SQLite: ${sqlite.rate.toFixed(1)}), added p50 ${two.addedP50.toFixed(1)} ms; every message answered once: ${exact ? 'yes' : 'no'}`,
      goal: 'every message answered exactly once',
      met: exact,
      how: `${ROOMS} rooms x ${PER_ROOM} messages, a ${MODEL_MS} ms model, the three set-ups one after another in this run`,
    });
    reportGoal({
      figure: `a room moves in ${(moved.moveMs / 1000).toFixed(1)} s after its replica dies`,
      goal: `<= ROOM_LEASE_S + 10 s (${LEASE_S + 10} s)`,
      met: moved.moveMs <= (LEASE_S + 10) * 1000 && moved.lost === 0 && moved.doubled === 0,
      how: 'two replicas, the one holding most rooms cut off from the platform and the database; one message in each of its rooms; until the last is answered',
    });
  } finally {
    await llm.close();
    await cluster?.stop();
  }
}

await main();
