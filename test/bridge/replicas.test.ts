/**
 * Two bridges (replicas) sharing one Postgres store, in this process: every platform event reaches both (as Discord
 * delivers each message to every session of a bot), each room is served by the one holding its lease, and each human
 * message is answered once. A throw-away cluster for this file; outside CI, without Postgres, one line and skipped.
 */
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { doubling } from '../../src/bridge/backoff.js';
import { type Bridge, createBridge } from '../../src/bridge/index.js';
import { silentLogger } from '../../src/log.js';
import { registry } from '../../src/metrics.js';
import type { StorePort } from '../../src/store/port.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { testConfig } from '../helpers/config.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';
import { SharedPlatform } from '../helpers/shared-platform.js';
import { until } from '../helpers/until.js';

const pg = migratedPostgres();
const plan = pg.plan;
let llm: FakeOpenAI;
if (plan.run) {
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    llm.respond(() => ({ content: 'on it' }));
  });
  afterAll(async () => llm?.close());
}

const LEASE_S = 3;

describe.runIf(plan.run)('replicas sharing one Postgres store', () => {
  const running: Array<{ bridge: Bridge; store: PostgresStore }> = [];
  let database: string;
  afterEach(async () => {
    for (const { bridge, store } of running.splice(0)) {
      await bridge.stop();
      await store.close();
    }
    await pg.cluster().dropDatabase(database);
  });

  /** How a replica is started: its sandbox engine and workspaces, its agent's price, more settings. */
  interface ReplicaOptions {
    readonly engine?: string;
    readonly workspaces?: 'bind' | 'volume';
    readonly price?: { input: number; cached: number; output: number };
    readonly env?: Record<string, string>;
    /** The store as the replica's bridge sees it. */
    readonly wrap?: (store: PostgresStore) => StorePort;
  }

  async function replicas(names: string[], options: ReplicaOptions = {}) {
    const db = await pg.cluster().createDatabase({ from: pg.migrated() });
    database = db.name;
    const platform = new SharedPlatform();
    const config = (replica: string, more: ReplicaOptions) =>
      testConfig({
        agents: [{ name: 'data', activation: 'mention', ...(more.price ? { price: more.price } : {}) }],
        env: {
          OPENAI_BASE_URL: llm.baseURL,
          LLM_MAX_RETRIES: '0',
          REPLICA_ID: replica,
          ROOM_LEASE_S: String(LEASE_S),
          ...(more.workspaces ? { SANDBOX_WORKSPACES: more.workspaces } : {}),
          ...more.env,
        },
      });
    const start = async (replica: string, more: ReplicaOptions = options) => {
      const store = await openPostgresStore(db.url);
      const bridge = createBridge({
        config: config(replica, more),
        store: more.wrap?.(store) ?? store,
        sandbox: new FakeSandbox(undefined, more.engine === undefined ? {} : { engine: more.engine }),
        adapters: [platform.adapter(replica)],
        logger: silentLogger(),
        // Posts refused for a reason that passes are tried again within 200 ms.
        backoff: doubling(50, 200),
      });
      try {
        await bridge.start();
      } catch (error) {
        await bridge.stop();
        await store.close();
        throw error;
      }
      const entry = { bridge, store };
      running.push(entry);
      return entry;
    };
    const started = [];
    for (const name of names) started.push(await start(name));
    return { platform, started, start };
  }

  const ROOMS = Array.from({ length: 6 }, (_, i) => `room${i}`);
  /** Which replica holds each room, by channel. */
  async function holders(store: PostgresStore): Promise<Map<string, string>> {
    const byId = new Map((await store.leases.holders()).map((l) => [l.roomId, l.holder]));
    return new Map((await store.rooms.all()).map((r) => [r.channel, byId.get(r.id) ?? '']));
  }

  it('answers each human message once, each room served by one replica', async () => {
    const { platform, started } = await replicas(['a', 'b']);
    for (let round = 0; round < 3; round++) {
      for (const room of ROOMS) platform.say(room, `@data question ${round} in ${room}`);
      await until(() => ROOMS.every((room) => platform.answers(room).length >= round + 1));
    }
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    for (const room of ROOMS) expect(platform.answers(room)).toEqual(['on it', 'on it', 'on it']);
    // Each room's answers came from one replica, the one holding its lease.
    const holders = new Map((await started[0]?.store.leases.holders())?.map((l) => [l.roomId, l.holder]));
    const rooms = await started[0]?.store.rooms.all();
    for (const room of rooms ?? []) {
      const by = new Set(platform.posts.filter((p) => p.channel === room.channel).map((p) => p.by));
      expect([...by]).toEqual([holders.get(room.id)]);
    }
    // And each human message is stored once.
    for (const room of rooms ?? []) {
      const history = await started[0]?.store.rooms.history(room.id, 100);
      expect(history?.filter((m) => m.author === 'alice')).toHaveLength(3);
    }
  });

  it('hands the rooms of a replica that stops cleanly to the other at once', async () => {
    const { platform, started } = await replicas(['a', 'b']);
    for (const room of ROOMS) platform.say(room, `@data first in ${room}`);
    await until(() => ROOMS.every((room) => platform.answers(room).length === 1));
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    const [a, b] = started;
    if (!a || !b) throw new Error('two replicas expected');
    await a.bridge.stop();
    expect((await b.store.leases.holders()).map((l) => l.holder).filter((h) => h === 'a')).toEqual([]);
    const before = Date.now();
    for (const room of ROOMS) platform.say(room, `@data second in ${room}`);
    await until(() => ROOMS.every((room) => platform.answers(room).length === 2));
    // Well within one lease length: nobody waited for a's leases to lapse.
    expect(Date.now() - before).toBeLessThan(LEASE_S * 1000);
    expect(platform.posts.filter((p) => p.text === 'on it' && p.by === 'a')).toHaveLength(
      platform.posts.filter((p) => p.by === 'a').length,
    );
    for (const room of ROOMS) expect(platform.answers(room)).toEqual(['on it', 'on it']);
    expect((await b.store.leases.holders()).every((l) => l.holder === 'b')).toBe(true);
  });

  it('takes up the rooms of a replica that died, answering what was said meanwhile once, within a lease and a round', async () => {
    const { platform, started } = await replicas(['a', 'b']);
    const [a, b] = started;
    if (!a || !b) throw new Error('two replicas expected');
    for (const room of ROOMS) platform.say(room, `@data first in ${room}`);
    await until(() => ROOMS.every((room) => platform.answers(room).length === 1));
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    const before = await holders(b.store);
    expect(ROOMS.filter((room) => before.get(room) === 'a').length).toBeGreaterThan(0);
    // a dies: nothing reaches it, and it reaches no database (its leases are neither renewed nor released).
    platform.detach('a');
    await a.store.close();
    const diedAt = Date.now();
    for (const room of ROOMS) platform.say(room, `@data meanwhile in ${room}`);
    await until(() => ROOMS.every((room) => platform.answers(room).length === 2));
    expect(Date.now() - diedAt).toBeLessThan((LEASE_S + 10) * 1000);
    await b.bridge.idle();
    for (const room of ROOMS) expect(platform.answers(room)).toEqual(['on it', 'on it']);
    expect([...(await holders(b.store)).values()].every((holder) => holder === 'b')).toBe(true);
    for (const room of await b.store.rooms.all()) {
      expect((await b.store.rooms.history(room.id, 100)).filter((m) => m.author === 'alice')).toHaveLength(2);
    }
  });

  it("leaves a post it could not make to the room's new holder once its lease is lost, and tries it no more", async () => {
    const { platform, started } = await replicas(['a', 'b']);
    const [a] = started;
    if (!a) throw new Error('two replicas expected');
    // Only a receives the question (a takes the room), and the platform refuses a's posts for now.
    platform.refusing.add('a');
    platform.say('lost', '@data a question', 'a');
    await until(() => (platform.tries.get('a') ?? 0) >= 2);
    // a is cut off from the database: its lease lapses, and b takes the room up and posts the answer from the outbox.
    await a.store.close();
    await until(() => platform.answers('lost').length === 1);
    expect(platform.posts.filter((p) => p.channel === 'lost').map((p) => p.by)).toEqual(['b']);
    // a's retry waits are 200 ms at most: over several of them, a does not try the post again.
    const tried = platform.tries.get('a');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(platform.tries.get('a')).toBe(tried);
    platform.refusing.delete('a');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(platform.answers('lost')).toEqual(['on it']);
  });

  it("answers a message given to one replica only (as Slack does) from the room's holder", async () => {
    const { platform, started } = await replicas(['a', 'b']);
    const [, b] = started;
    if (!b) throw new Error('two replicas expected');
    for (const room of ROOMS) platform.say(room, `@data first in ${room}`);
    await until(() => ROOMS.every((room) => platform.answers(room).length === 1));
    const held = await holders(b.store);
    // Each message goes to the replica that does not serve its room.
    for (const room of ROOMS) platform.say(room, `@data to the other in ${room}`, held.get(room) === 'a' ? 'b' : 'a');
    await until(() => ROOMS.every((room) => platform.answers(room).length === 2));
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    for (const room of ROOMS) {
      expect(platform.answers(room)).toEqual(['on it', 'on it']);
      const by = new Set(platform.posts.filter((p) => p.channel === room).map((p) => p.by));
      expect([...by]).toEqual([held.get(room)]);
    }
    expect(await b.store.inbox.list('nobody')).toEqual([]);
  });

  it("tells the receiving replica's adapter a message for another replica's room is kept once the inbox has it, and lost when it cannot", async () => {
    const { platform, start } = await replicas(['a']);
    let inboxWrites = true;
    // Replica b's inbox writes fail on demand, as a database that cannot write fails them.
    await start('b', {
      wrap: (store) => {
        const inbox = new Proxy(store.inbox, {
          get: (target, name) =>
            name === 'put'
              ? async (...args: Parameters<PostgresStore['inbox']['put']>) => {
                  if (!inboxWrites) throw new Error('the database cannot write');
                  return target.put(...args);
                }
              : Reflect.get(target, name, target),
        });
        return new Proxy(store, {
          get: (target, name) => (name === 'inbox' ? inbox : Reflect.get(target, name, target)),
        });
      },
    });
    platform.say('room0', '@data first', 'a');
    await until(() => platform.answers('room0').length === 1);

    const kept = platform.say('room0', '@data given to b', 'b');
    await until(() => platform.receipts.has(`b:${kept}`));
    expect(platform.receipts.get(`b:${kept}`)).toBe('kept');
    await until(() => platform.answers('room0').length === 2);

    inboxWrites = false;
    const lost = platform.say('room0', '@data given to b while its inbox cannot write', 'b');
    await until(() => platform.receipts.has(`b:${lost}`));
    // Not acknowledged on Slack: it comes again.
    expect(platform.receipts.get(`b:${lost}`)).toBe('lost');
  });

  it('shows in /status which replica serves the room, and counts the leases it holds', async () => {
    const { platform, started } = await replicas(['solo']);
    const [solo] = started;
    if (!solo) throw new Error('one replica expected');
    for (const room of ROOMS.slice(0, 3)) platform.say(room, `@data hello in ${room}`);
    await until(() => ROOMS.slice(0, 3).every((room) => platform.answers(room).length === 1));
    expect(solo.bridge.leases).toEqual({ replica: 'solo', held: 3 });
    const gauge = await registry.getSingleMetric('roundtable_room_leases_held')?.get();
    expect(gauge?.values[0]?.value).toBe(3);
    const status = await platform.command('solo', {
      platform: 'shared',
      channel: 'room0',
      name: 'status',
      args: '',
      user: { id: 'u1', name: 'alice' },
      isOperator: true,
    });
    expect(status.split('\n').slice(0, 2)).toEqual(['Room shared:room0', 'Served by: replica solo']);
  });

  it('lists in /status the live replicas, each with its host and the rooms it holds', async () => {
    const { platform, started } = await replicas(['a', 'b']);
    for (const room of ROOMS) platform.say(room, `@data hello in ${room}`);
    await until(() => ROOMS.every((room) => platform.answers(room).length === 1));
    const byRoom = await holders(started[0]?.store as PostgresStore);
    const held = [...byRoom.values()];
    const count = (id: string) => held.filter((holder) => holder === id).length;
    const rooms = (n: number) => `${n} room${n === 1 ? '' : 's'}`;
    // Asked of the replica serving the room.
    const status = await platform.command(byRoom.get('room0') ?? '', {
      platform: 'shared',
      channel: 'room0',
      name: 'status',
      args: '',
      user: { id: 'u1', name: 'alice' },
      isOperator: true,
    });
    expect(status.split('\n')[2]).toBe(
      `Replicas live: a on ${hostname()} (${rooms(count('a'))}), b on ${hostname()} (${rooms(count('b'))})`,
    );
  });

  it('refuses to start with bind workspaces beside a live replica with bind workspaces on another engine', async () => {
    const { started, start } = await replicas(['a'], { engine: 'engine-1' });
    await expect(start('b', { engine: 'engine-2' })).rejects.toThrow(
      /^environment: SANDBOX_WORKSPACES: bind on engine engine-2 cannot run beside replica a \(host [^)]+\), which has bind workspaces on engine engine-1: a room moving between them would leave its files behind; set SANDBOX_WORKSPACES=volume on one shared engine$/,
    );
    // The refused replica is not left in the registry (it would hold off others for a lease).
    expect((await started[0]?.store.replicas.live(60_000))?.map((r) => r.id)).toEqual(['a']);
  });

  it('starts beside live replicas on the same engine, or with volume workspaces', async () => {
    const { started, start } = await replicas(['a'], { engine: 'engine-1' });
    await start('b', { engine: 'engine-1' });
    await start('c', { engine: 'engine-2', workspaces: 'volume' });
    const live = (await started[0]?.store.replicas.live(60_000)) ?? [];
    expect(live.map((r) => [r.id, r.engine, r.workspaces])).toEqual([
      ['a', 'engine-1', 'bind'],
      ['b', 'engine-1', 'bind'],
      ['c', 'engine-2', 'volume'],
    ]);
  });

  it("leaves the spending hold of another replica's call under way alone, and spends a dead replica's whole once it is not live", async () => {
    let calls = 0;
    // The first call never ends (a's call under way); the room's turn taken up after a dies is answered.
    llm.respond(() => (++calls === 1 ? { hang: true } : { content: 'on it' }));
    try {
      const { platform, started, start } = await replicas(['a'], { price: { input: 1, cached: 1, output: 1 } });
      const [a] = started;
      if (!a) throw new Error('one replica expected');
      const holds = async (store: PostgresStore) =>
        (await store.pool.query<{ replica: string }>('SELECT replica FROM spend_holds')).rows.map((r) => r.replica);
      platform.say('room0', '@data a long question');
      await until(async () => (await holds(a.store)).length === 1);
      const b = await start('b');
      expect(await holds(b.store)).toEqual(['a']);
      // b's periodic looks (every third of a lease) leave it too while a is live.
      const seen = async (id: string) =>
        Number(
          (await b.store.pool.query('SELECT seen_at - started_at AS up FROM replicas WHERE id = $1', [id])).rows[0]?.up,
        );
      await until(async () => (await seen('b')) >= (LEASE_S * 1000 * 2) / 3);
      expect(await holds(b.store)).toEqual(['a']);
      const [held] = (await b.store.pool.query<{ scopes: string }>('SELECT scopes FROM spend_holds')).rows;
      const amount = (JSON.parse(held?.scopes ?? '[]') as Array<{ scope: string; amount: number }>).find(
        (s) => s.scope === 'bridge',
      )?.amount;
      // a dies: it renews and marks itself seen no more.
      platform.detach('a');
      await a.store.close();
      await until(async () => !(await holds(b.store)).includes('a'));
      await until(() => platform.answers('room0').length === 1);
      await until(async () => (await holds(b.store)).length === 0);
      const [bridgeRow] = (
        await b.store.pool.query<{ spent: number; reserved: number }>(
          "SELECT spent, reserved FROM spend WHERE scope = 'bridge'",
        )
      ).rows;
      // a's hold spent whole, and b's own call settled at what it cost.
      expect(bridgeRow?.reserved).toBe(0);
      expect(bridgeRow?.spent).toBeGreaterThan(amount ?? Number.POSITIVE_INFINITY);
    } finally {
      llm.respond(() => ({ content: 'on it' }));
    }
  });

  it('embeds each message of a backlog once, each replica those of the rooms it holds', async () => {
    // Slow embeddings: both replicas' workers are at the backlog at once.
    llm.delayEmbeddings(150);
    try {
      const since = llm.embeddingRequests.length;
      const { platform, started } = await replicas(['a', 'b'], {
        env: { EMBEDDINGS_MODEL: 'emb', EMBEDDINGS_BATCH: '2', EMBEDDINGS_CONCURRENCY: '1' },
      });
      const [a] = started;
      if (!a) throw new Error('two replicas expected');
      // Nobody is addressed: no turn (whose recall would embed its newest message), only the backlog.
      for (const room of ROOMS) platform.say(room, `backlog line one in ${room}`);
      for (const room of ROOMS) platform.say(room, `backlog line two in ${room}`);
      const inputs = () =>
        llm.embeddingRequests
          .slice(since)
          .filter((r) => r.model === 'emb')
          .flatMap((r) => r.input);
      await until(async () => {
        const stored = await Promise.all((await a.store.rooms.all()).map((r) => a.store.rooms.history(r.id, 10)));
        return stored.flat().length === 2 * ROOMS.length;
      });
      await until(async () => (await a.store.embeddings.pending('emb', 0, 100)).length === 0);
      await Promise.all(started.map(({ bridge }) => bridge.embedded()));
      for (const room of ROOMS) {
        for (const line of ['one', 'two']) {
          expect(inputs().filter((text) => text.includes(`backlog line ${line} in ${room}`))).toHaveLength(1);
        }
      }
      expect(inputs()).toHaveLength(2 * ROOMS.length);
    } finally {
      llm.delayEmbeddings(0);
    }
  });
});
