/**
 * Two bridges (replicas) sharing one Postgres store, in this process: every platform event reaches both (as Discord
 * delivers each message to every session of a bot), each room is served by the one holding its lease, and each human
 * message is answered once. A throw-away cluster for this file; outside CI, without Postgres, one line and skipped.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Bridge, createBridge } from '../../src/bridge/index.js';
import { silentLogger } from '../../src/log.js';
import type { AdapterSink, ChatAdapter, Outbound, Posted } from '../../src/ports.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { testConfig } from '../helpers/config.js';
import { type PostgresCluster, postgresPlan, startCluster } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const plan = postgresPlan();
if (plan.note) console.warn(plan.note);

let cluster: PostgresCluster;
let migrated: string;
let llm: FakeOpenAI;
if (plan.run) {
  beforeAll(async () => {
    if (plan.problem) throw new Error(plan.problem);
    cluster = await startCluster({ ...(plan.bin ? { bin: plan.bin } : {}) });
    const template = await cluster.createDatabase();
    await (await openPostgresStore(template.url)).close();
    migrated = template.name;
    llm = await startFakeOpenAI();
    llm.respond(() => ({ content: 'on it' }));
  }, 180_000);
  afterAll(async () => {
    await llm?.close();
    await cluster?.stop();
  });
}

/** One platform every replica is connected to: each message and each post's echo reaches every replica. */
class SharedPlatform {
  readonly posts: Array<Outbound & { id: string; by: string }> = [];
  private readonly sinks = new Map<string, AdapterSink>();
  private next = 1;

  adapter(replica: string): ChatAdapter {
    return {
      platform: 'shared',
      start: async (sink) => {
        this.sinks.set(replica, sink);
      },
      stop: async () => {
        this.sinks.delete(replica);
      },
      post: async (message): Promise<Posted> => {
        const id = `p${this.next++}`;
        this.posts.push({ ...message, id, by: replica });
        const agent = message.agent;
        if (agent) {
          queueMicrotask(() =>
            this.deliver(id, message.channel, { id: `bot-${agent}`, name: agent, kind: 'agent' }, message.text),
          );
        }
        return { messageIds: [id] };
      },
    };
  }

  /** A human says something in a channel; every connected replica receives it. */
  say(channel: string, text: string): string {
    const id = `h${this.next++}`;
    this.deliver(id, channel, { id: 'u1', name: 'alice', kind: 'human' }, text);
    return id;
  }

  private deliver(
    id: string,
    channel: string,
    author: { id: string; name: string; kind: 'human' | 'agent' },
    text: string,
  ) {
    for (const sink of this.sinks.values()) {
      void sink.receive({ platform: 'shared', channel, messageId: id, author, text });
    }
  }

  answers(channel: string): string[] {
    return this.posts.filter((p) => p.channel === channel && p.agent === 'data').map((p) => p.text);
  }
}

describe.runIf(plan.run)('replicas sharing one Postgres store', () => {
  const running: Array<{ bridge: Bridge; store: PostgresStore }> = [];
  let database: string;
  afterEach(async () => {
    for (const { bridge, store } of running.splice(0)) {
      await bridge.stop();
      await store.close();
    }
    await cluster.dropDatabase(database);
  });

  async function replicas(names: string[]) {
    const db = await cluster.createDatabase({ from: migrated });
    database = db.name;
    const platform = new SharedPlatform();
    const config = (replica: string) =>
      testConfig({
        agents: [{ name: 'data', activation: 'mention' }],
        env: { OPENAI_BASE_URL: llm.baseURL, LLM_MAX_RETRIES: '0', REPLICA_ID: replica, ROOM_LEASE_S: '5' },
      });
    const start = async (replica: string) => {
      const store = await openPostgresStore(db.url);
      const bridge = createBridge({
        config: config(replica),
        store,
        sandbox: new FakeSandbox(),
        adapters: [platform.adapter(replica)],
        logger: silentLogger(),
      });
      await bridge.start();
      const entry = { bridge, store };
      running.push(entry);
      return entry;
    };
    const started = [];
    for (const name of names) started.push(await start(name));
    return { platform, started, start };
  }

  const ROOMS = Array.from({ length: 6 }, (_, i) => `room${i}`);

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
    expect(Date.now() - before).toBeLessThan(5000);
    expect(platform.posts.filter((p) => p.text === 'on it' && p.by === 'a')).toHaveLength(
      platform.posts.filter((p) => p.by === 'a').length,
    );
    for (const room of ROOMS) expect(platform.answers(room)).toEqual(['on it', 'on it']);
    expect((await b.store.leases.holders()).every((l) => l.holder === 'b')).toBe(true);
  });
});
