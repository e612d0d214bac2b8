/**
 * Two bridges (replicas) sharing one Postgres store, in this process: every platform event reaches both (as Discord
 * delivers each message to every session of a bot), each room is served by the one holding its lease, and each human
 * message is answered once. A throw-away cluster for this file; outside CI, without Postgres, one line and skipped.
 */
import { hostname } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Backoff, DEFAULT_BACKOFF, doubling } from '../../src/bridge/backoff.js';
import { type Bridge, createBridge } from '../../src/bridge/index.js';
import { StoreError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { registry } from '../../src/metrics.js';
import type { StorePort, StoreSignals } from '../../src/store/port.js';
import { LISTENER_NAME } from '../../src/store/postgres/signals.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { type TestAgent, testConfig } from '../helpers/config.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { agentOf, newestOf, situationOf, toolResultsOf } from '../helpers/harness.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';
import { SharedPlatform } from '../helpers/shared-platform.js';
import { history } from '../helpers/store-views.js';
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
  /** What a test opened beside its replicas (a fault proxy, a store of its own), closed after them. */
  const closing: Array<{ close(): Promise<void> }> = [];
  let database: string;
  afterEach(async () => {
    llm.respond(() => ({ content: 'on it' }));
    for (const { bridge, store } of running.splice(0)) {
      await bridge.stop();
      await store.close();
    }
    for (const other of closing.splice(0)) await other.close();
    await pg.cluster().dropDatabase(database);
  });

  /** How a replica is started: its agents, sandbox engine and workspaces, the agents' price, its lease and waits, more settings. */
  interface ReplicaOptions {
    readonly agents?: TestAgent[];
    readonly engine?: string;
    readonly workspaces?: 'bind' | 'volume';
    readonly price?: { input: number; cached: number; output: number };
    readonly env?: Record<string, string>;
    readonly leaseS?: number;
    /** The waits between tries (default: posts refused for a reason that passes are tried again within 200 ms). */
    readonly backoff?: Backoff;
    /** The store as the replica's bridge sees it. */
    readonly wrap?: (store: PostgresStore) => StorePort;
    /** Which rooms are a replica's own (as a terminal room is its process's); every room by default. */
    readonly owns?: (replica: string, channel: string) => boolean;
    /** The database's URL as the replica reaches it (through a fault proxy); the URL itself by default. */
    readonly url?: (url: string) => string;
  }

  async function replicas(names: string[], options: ReplicaOptions = {}) {
    const db = await pg.cluster().createDatabase({ from: pg.migrated() });
    database = db.name;
    const platform = new SharedPlatform();
    const config = (replica: string, more: ReplicaOptions) =>
      testConfig({
        agents: (more.agents ?? [{ name: 'data', activation: 'mention' }]).map((agent) =>
          more.price ? { ...agent, price: more.price } : agent,
        ),
        env: {
          OPENAI_BASE_URL: llm.baseURL,
          LLM_MAX_RETRIES: '0',
          REPLICA_ID: replica,
          ROOM_LEASE_S: String(more.leaseS ?? LEASE_S),
          ...(more.workspaces ? { SANDBOX_WORKSPACES: more.workspaces } : {}),
          ...more.env,
        },
      });
    const start = async (replica: string, more: ReplicaOptions = options) => {
      const store = await openPostgresStore(more.url?.(db.url) ?? db.url);
      const bridge = createBridge({
        config: config(replica, more),
        store: more.wrap?.(store) ?? store,
        sandbox: new FakeSandbox(undefined, more.engine === undefined ? {} : { engine: more.engine }),
        adapters: [
          more.owns
            ? { ...platform.adapter(replica), ownsChannel: (channel: string) => more.owns?.(replica, channel) ?? true }
            : platform.adapter(replica),
        ],
        logger: silentLogger(),
        backoff: more.backoff ?? doubling(50, 200),
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
    return { platform, started, start, db };
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
    // Half the rooms are opened by a message only a receives (as Slack sends an event to one app), so a holds rooms
    // however the two replicas race for the others on a busy machine.
    for (const [i, room] of ROOMS.entries())
      platform.say(room, `@data first in ${room}`, i % 2 === 0 ? 'a' : undefined);
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

  it("never takes up another replica's own room (its terminal room) left with work, though it takes up the others", async () => {
    // `main@<replica>` is that replica's own, as each replica's terminal room is.
    const owns = (replica: string, channel: string) => !channel.startsWith('main@') || channel === `main@${replica}`;
    const { platform, started, start } = await replicas(['a', 'b'], { owns });
    const [a, b] = started;
    if (!a || !b) throw new Error('two replicas expected');
    llm.respond(() => ({ content: 'on it', delayMs: 1_500 }));
    // a is asked in its own room and in a shared one, and dies while both turns are under way.
    const asked = llm.requests.length;
    platform.say('main@a', '@data in the terminal', 'a');
    platform.say('room0', '@data in a shared room', 'a');
    await until(() => llm.requests.length >= asked + 2);
    platform.detach('a');
    await a.store.close();
    await a.bridge.stop();
    // b takes up the shared room (its work is answered) but never a's own.
    await until(() => platform.posts.some((p) => p.channel === 'room0' && p.by === 'b'));
    await b.bridge.idle();
    expect(platform.posts.filter((p) => p.channel === 'main@a' && p.by === 'b')).toEqual([]);
    // b's own room is b's: a message there is answered by b.
    platform.say('main@b', '@data in b terminal', 'b');
    await until(() => platform.answers('main@b').length === 1);
    // a started again takes up its own room's work.
    running.splice(running.indexOf(a), 1);
    await start('a', { owns });
    await until(() => platform.posts.some((p) => p.channel === 'main@a' && p.by === 'a'));
    expect(platform.posts.filter((p) => p.channel === 'main@a').map((p) => p.by)).toEqual(['a']);
  }, 90_000);

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

  it("answers a message another replica's catch-up read for a room this one serves, and what is asked after", async () => {
    // A replica started again catches up every room, those the other serves too: what it reads there that the other
    // never stored (a message Slack gave the dead replica alone) is kept for the room's replica, marked as missed.
    const { platform, started } = await replicas(['a', 'b']);
    const [, b] = started;
    if (!b) throw new Error('two replicas expected');
    platform.say('room0', '@data first');
    await until(() => platform.answers('room0').length === 1);
    const holder = (await holders(b.store)).get('room0');
    const other = holder === 'a' ? 'b' : 'a';
    platform.say('room0', '@data said while the other replica was away', other, { missed: true });
    await until(() => platform.answers('room0').length === 2);
    platform.say('room0', '@data asked after');
    await until(() => platform.answers('room0').length === 3);
    const by = new Set(platform.posts.filter((p) => p.channel === 'room0').map((p) => p.by));
    expect([...by]).toEqual([holder]);
  });

  const resumed = (r: Parameters<typeof situationOf>[0]) => /request #\d+ has answered/.test(situationOf(r));

  /** Replicas a and b with agents pm and data; pm, asked in room1, asks data and alice in room2 with request_reply. */
  async function pmAsksInRoom2() {
    const { platform, started } = await replicas(['a', 'b'], {
      agents: [
        { name: 'pm', tools: ['send_channel_message'] },
        { name: 'data', activation: 'mention' },
      ],
    });
    const [a, b] = started;
    if (!a || !b) throw new Error('two replicas expected');
    const before = llm.requests.length; // the fake model's requests of this test only
    llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'data') return { content: 'data says 42' };
      if (resumed(r)) return { content: 'Everyone answered: thanks.' };
      if (r.messages.at(-1)?.role === 'tool') return { content: 'Asked in room2.' };
      const ask = { channel: 'shared:room2', message: '@data @alice numbers?', request_reply: ['data', 'alice'] };
      return { toolCalls: [{ name: 'send_channel_message', arguments: ask }] };
    });
    return { platform, started, a, b, before };
  }

  it('asks agents and a human in a room another replica serves, and resumes the requester once when all answered', async () => {
    const { platform, started, a, before } = await pmAsksInRoom2();
    // room2 is b's, room1 a's.
    platform.say('room2', 'good morning', 'b');
    await until(async () => (await holders(a.store)).get('room2') === 'b');
    platform.say('room1', '@pm ask data and alice in room2', 'a');
    await until(() => platform.posts.some((p) => p.channel === 'room2' && p.text === 'data says 42'));
    await until(() => platform.posts.some((p) => p.channel === 'room1' && p.text === 'Asked in room2.'));
    platform.say('room2', 'alice says 42 too');
    await until(() => platform.posts.some((p) => p.channel === 'room1' && p.text === 'Everyone answered: thanks.'));
    await until(async () => (await a.store.rooms.notes()).length === 0);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    // Each room's posts in order (the two rooms post at once, so their posts interleave either way).
    const postsIn = (room: string) => platform.posts.filter((p) => p.channel === room).map((p) => [p.by, p.text]);
    expect(postsIn('room2')).toEqual([
      ['b', '@data @alice numbers?'],
      ['b', 'data says 42'],
    ]);
    expect(postsIn('room1')).toEqual([
      ['a', 'Asked in room2.'],
      ['a', 'Everyone answered: thanks.'],
    ]);
    expect(platform.posts).toHaveLength(4);
    expect(llm.requests.slice(before).filter((r) => agentOf(r) === 'pm' && resumed(r))).toHaveLength(1);
    const [request] = await a.store.rooms.requests();
    expect(request).toMatchObject({ status: 'closed', origin: 'shared:room1', target: 'shared:room2' });
  });

  it('resumes a requester once when its request settles in a room another replica serves, without a restart', async () => {
    const { platform, started, a, before } = await pmAsksInRoom2();
    // Both rooms go to a: the request is opened in room2 and data answers there.
    platform.say('room1', '@pm ask data and alice in room2', 'a');
    await until(() => platform.posts.some((p) => p.channel === 'room2' && p.text === 'data says 42'));
    await until(() => platform.posts.some((p) => p.channel === 'room1' && p.text === 'Asked in room2.'));
    await a.bridge.idle();
    const room2 = (await a.store.rooms.all()).find((room) => room.channel === 'room2');
    if (!room2) throw new Error('room2 is stored');
    // room2 moves to b (as when a's lease on it lapses); a notices at its next renewal and stops serving it.
    await a.store.leases.release('a', [room2.id]);
    await until(() => a.bridge.leases?.held === 1);
    // alice answers in room2, to b only: b takes the room, and the request settles there while its requester waits
    // in room1, which a serves.
    const answeredAt = Date.now();
    platform.say('room2', 'alice says 42 too', 'b');
    await until(() => platform.posts.some((p) => p.channel === 'room1' && p.text === 'Everyone answered: thanks.'));
    // Within a third of a lease at worst (a's next look at the store), with room to spare on a busy machine.
    expect(Date.now() - answeredAt).toBeLessThan(LEASE_S * 1000);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    expect(platform.posts.filter((p) => p.channel === 'room1').map((p) => [p.by, p.text])).toEqual([
      ['a', 'Asked in room2.'],
      ['a', 'Everyone answered: thanks.'],
    ]);
    // Once its stored copy is gone nothing can deliver the note again: the requester was resumed once.
    await until(async () => (await a.store.rooms.notes()).length === 0);
    await a.bridge.idle();
    expect(llm.requests.slice(before).filter((r) => agentOf(r) === 'pm' && resumed(r))).toHaveLength(1);
    expect((await a.store.rooms.requests())[0]).toMatchObject({ status: 'closed', origin: 'shared:room1' });
  });

  it("holds an agent's private chat in the pair's room another replica serves, once, each side answered once", async () => {
    const chatting = ['chat_request' as const, 'chat_response' as const, 'chat' as const];
    const { platform, started } = await replicas(['a', 'b'], {
      agents: [
        { name: 'pm', tools: chatting },
        { name: 'data', activation: 'mention', tools: chatting },
      ],
    });
    const [a, b] = started;
    if (!a || !b) throw new Error('two replicas expected');
    // The pair's private room is b's (as when an earlier chat of theirs took it up there).
    const pair = await b.store.rooms.open('private', 'data+pm');
    expect(await b.store.leases.acquire(pair.id, 'b', 60_000)).toBeDefined();
    const before = llm.requests.length; // the fake model's requests of this test only
    llm.respond((r) => {
      const agent = agentOf(r);
      const tools = toolResultsOf(r);
      const request = /asks you for a private chat \(request #(\d+)\)/.exec(situationOf(r));
      if (agent === 'data' && request) {
        return tools.length === 0
          ? { toolCalls: [{ name: 'chat_response', arguments: { request_id: Number(request[1]), accept: true } }] }
          : { content: 'the real number is 42' };
      }
      if (agent === 'data' && newestOf(r).includes('thanks for the number')) return { content: 'you are welcome' };
      if (agent === 'pm' && newestOf(r).endsWith('@pm sort it out with data privately')) {
        return tools.length === 0
          ? { toolCalls: [{ name: 'chat_request', arguments: { to: 'data', reason: 'budget details' } }] }
          : { content: 'I asked data for a word.' };
      }
      if (agent === 'pm' && newestOf(r).endsWith('@pm thank data')) {
        return { toolCalls: [{ name: 'chat', arguments: { to: 'data', message: 'thanks for the number' } }] };
      }
      if (agent === 'pm' && newestOf(r).includes('the real number is 42')) return { content: 'Understood.' };
      return { content: '[pass]' };
    });
    // room1 is a's: pm's turn runs there, and its chat goes to b through the store.
    platform.say('room1', 'hello', 'a');
    await until(async () => (await holders(a.store)).get('room1') === 'a');
    platform.say('room1', '@pm sort it out with data privately', 'a');
    await until(() => platform.posts.some((p) => p.channel === 'room1' && p.text === 'I asked data for a word.'));
    await until(async () => (await history(b.store, 'private', 'data+pm')).length === 2);
    platform.say('room1', '@pm thank data', 'a');
    await until(async () => (await history(b.store, 'private', 'data+pm')).length === 4);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    expect((await history(b.store, 'private', 'data+pm')).map((m) => [m.author, m.content])).toEqual([
      ['data', 'the real number is 42'],
      ['pm', 'Understood.'],
      ['pm', 'thanks for the number'],
      ['data', 'you are welcome'],
    ]);
    const [chat] = await a.store.chats.involving('pm');
    expect(chat).toMatchObject({ from: 'pm', to: 'data', status: 'accepted' });
    // Served by b all along; nothing private was posted on the platform.
    expect((await holders(a.store)).get('data+pm')).toBe('b');
    expect(platform.posts.map((p) => [p.channel, p.by, p.text])).toEqual([['room1', 'a', 'I asked data for a word.']]);
    const mine = llm.requests.slice(before);
    const pmResults = mine.filter((r) => agentOf(r) === 'pm').flatMap((r) => toolResultsOf(r));
    expect(pmResults).toContain(`Chat request #${chat?.id} sent to @data; they are asked to accept or decline now.`);
    // Each side answered once: data's acceptance and reply, pm's answer, data's answer to the thanks.
    const first = mine.filter((r) => toolResultsOf(r).length === 0);
    expect(
      first.filter((r) => agentOf(r) === 'data' && situationOf(r).includes('asks you for a private chat')),
    ).toHaveLength(1);
    expect(first.filter((r) => agentOf(r) === 'pm' && newestOf(r).includes('the real number is 42'))).toHaveLength(1);
    expect(first.filter((r) => agentOf(r) === 'data' && newestOf(r).includes('thanks for the number'))).toHaveLength(1);
  });

  const pass = (id: string) => ({
    platform: 'shared',
    channel: 'room0',
    name: 'pass' as const,
    args: '',
    user: { id: 'u1', name: 'alice' },
    isOperator: true,
    id,
  });
  const handBacks = async (store: PostgresStore, channel: string) => {
    const room = (await store.rooms.all()).find((r) => r.channel === channel);
    if (!room) return 0;
    const records = await store.rooms.decisions(room.id, 0, Number.MAX_SAFE_INTEGER);
    return records.filter((d) => d.record.kind === 'hand-back').length;
  };

  it('carries out an interaction that both replicas receive once, and answers it once', async () => {
    const { platform, started } = await replicas(['a', 'b']);
    const [a] = started;
    if (!a) throw new Error('two replicas expected');
    platform.say('room0', '@data hello');
    await until(() => platform.answers('room0').length === 1);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    const answers = await Promise.all([platform.command('a', pass('i1')), platform.command('b', pass('i1'))]);
    expect(answers.filter((answer) => answer === undefined)).toHaveLength(1);
    expect(answers.filter((answer) => answer !== undefined)).toEqual(['Control is with the humans.']);
    expect(await handBacks(a.store, 'room0')).toBe(1);
  });

  it("carries out a command received by the replica that does not hold the room on the room's replica, and answers it", async () => {
    const { platform, started } = await replicas(['a', 'b']);
    const [a, b] = started;
    if (!a || !b) throw new Error('two replicas expected');
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    llm.respond(async () => {
      await gate;
      return { content: 'too late' };
    });
    const asked = llm.requests.length;
    platform.say('room0', '@data a slow question');
    await until(() => llm.requests.length > asked);
    const holder = (await holders(a.store)).get('room0');
    const other = holder === 'a' ? 'b' : 'a';
    const answer = await platform.command(other, { ...pass('i2'), reply: 'route-i2' });
    expect(answer).toBe('Control is with the humans (1 agent turn stopped).');
    // The replica that claimed it is live: it answered, and the room's replica did not answer again.
    expect(platform.replies).toEqual([]);
    release();
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    expect(platform.answers('room0')).toEqual([]);
    expect(await handBacks(a.store, 'room0')).toBe(1);
    expect((await holders(a.store)).get('room0')).toBe(holder);
  });

  it("answers a handed-on command's operator from the room's replica when the replica that claimed it is gone", async () => {
    const { platform, started } = await replicas(['a', 'b']);
    const [a] = started;
    if (!a) throw new Error('two replicas expected');
    platform.say('room0', '@data hello');
    await until(() => platform.answers('room0').length === 1);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    const holder = (await holders(a.store)).get('room0');
    // Replica c claimed a /pass for room0 and left it with its reply route, then died (it is not live).
    const commands = a.store.commands;
    if (!commands) throw new Error('Postgres claims commands');
    const event = JSON.stringify(pass('i3'));
    expect(await commands.claim('shared:i3', 'shared', 'room0', event, 'c', Date.now())).toBe(true);
    await commands.wait('shared:i3', 'route-i3');
    await until(() => platform.replies.length > 0);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    expect(platform.replies).toEqual([{ by: holder, reply: 'route-i3', text: 'Control is with the humans.' }]);
    expect(await commands.answerOf('shared:i3')).toBe('Control is with the humans.');
    expect(await handBacks(a.store, 'room0')).toBe(1);
    // The route is a secret: it is not kept once the command is answered.
    const { rows } = await a.store.pool.query('SELECT reply FROM command_claims WHERE id = $1', ['shared:i3']);
    expect(rows).toEqual([{ reply: null }]);
  });

  /** How many replicas listen for signals now (their listening connections). */
  const listening = async (store: PostgresStore) =>
    (
      await store.pool.query(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
        [LISTENER_NAME],
      )
    ).rows[0].n as number;
  /** Ends the replicas' listening connections, as a network drop or a restarted server would. */
  const killListeners = (store: PostgresStore) =>
    store.pool.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
      [LISTENER_NAME],
    );

  /** room0 answered once; its holder's store, and the replica that does not hold it. */
  async function heldRoom(started: Array<{ bridge: Bridge; store: PostgresStore }>, platform: SharedPlatform) {
    platform.say('room0', '@data first');
    await until(() => platform.answers('room0').length === 1);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    const [a, b] = started;
    if (!a || !b) throw new Error('two replicas expected');
    const holder = (await holders(a.store)).get('room0');
    const room = (await a.store.rooms.all()).find((r) => r.channel === 'room0');
    if (!room || !holder) throw new Error('room0 is held');
    const other = holder === 'a' ? 'b' : 'a';
    /** How long until the room's holder stored a message given to the other replica only (as Slack does). */
    const delay = async (text: string) => {
      const at = Date.now();
      const id = platform.say('room0', text, other);
      await until(() => a.store.rooms.seen(room.id, id));
      return Date.now() - at;
    };
    return { store: a.store, delay };
  }

  it('takes an event kept for its room at once when told (LISTEN/NOTIFY), not at its next look, and again once its listening connection is back', async () => {
    // A lease of 300 s: the regular look comes every 100 s, so it cannot be what delivered within a second.
    const { platform, started } = await replicas(['a', 'b'], { leaseS: 300 });
    const { store, delay } = await heldRoom(started, platform);
    await until(async () => (await listening(store)) === 2);
    const first = await delay('@data kept by the other replica');
    expect(first).toBeLessThan(1000);
    await until(() => platform.answers('room0').length === 2);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    await killListeners(store);
    await until(async () => (await listening(store)) === 2);
    const again = await delay('@data kept again');
    expect(again).toBeLessThan(1000);
    await until(() => platform.answers('room0').length === 3);
  });

  it('still takes kept events at its regular look while its listening connection is down, and listens again', async () => {
    // Reconnecting waits 6 s; the regular look comes every second (a lease of 3 s).
    const slowListener = (store: PostgresStore): StorePort => {
      const signals: StoreSignals = {
        listen: (on, options) => store.signals.listen(on, { ...options, backoff: () => 6000 }),
      };
      return new Proxy(store, { get: (target, name) => (name === 'signals' ? signals : Reflect.get(target, name)) });
    };
    const { platform, started } = await replicas(['a', 'b'], { wrap: slowListener });
    const { store, delay } = await heldRoom(started, platform);
    await until(async () => (await listening(store)) === 2);
    await killListeners(store);
    await until(async () => (await listening(store)) === 0);
    expect(await delay('@data while nobody listens')).toBeLessThan(LEASE_S * 1000);
    expect(await listening(store)).toBe(0);
    await until(async () => (await listening(store)) === 2);
  });

  it('listens again within seconds of its database answering after an outage of tens of seconds', async () => {
    // Its tries to connect again fail all through the outage: they must not have grown a minute apart meanwhile.
    const proxy = await startFaultProxy({ host: '127.0.0.1', port: pg.cluster().port });
    closing.push(proxy);
    const { db } = await replicas(['solo'], {
      backoff: DEFAULT_BACKOFF,
      url: (url) => url.replace(`:${pg.cluster().port}/`, `:${proxy.port}/`),
    });
    const direct = await openPostgresStore(db.url);
    closing.push(direct);
    await until(async () => (await listening(direct)) === 1);
    proxy.cut();
    await until(async () => (await listening(direct)) === 0);
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    proxy.accept();
    const back = Date.now();
    await until(async () => (await listening(direct)) === 1);
    expect(Date.now() - back).toBeLessThan(6_000);
  }, 60_000);

  it('leaves an event kept for its room in the store until the room stored it: a stop with it held in memory loses nothing', async () => {
    // Replica a's decisions fail while `cut` (its store cannot write): the kept event it takes is held in its memory.
    let cut = false;
    const failing = (store: PostgresStore): StorePort => {
      const rooms = new Proxy(store.rooms, {
        get: (target, name) =>
          name === 'commit'
            ? async (...args: Parameters<PostgresStore['rooms']['commit']>) => {
                if (cut) throw new StoreError('Connection terminated unexpectedly', { retryable: true });
                return target.commit(...args);
              }
            : Reflect.get(target, name, target),
      });
      return new Proxy(store, {
        get: (target, name) => (name === 'rooms' ? rooms : Reflect.get(target, name, target)),
      });
    };
    const { platform, started, start } = await replicas(['a'], { wrap: failing });
    const [a] = started;
    if (!a) throw new Error('replica a expected');
    platform.say('room0', '@data first');
    await until(() => platform.answers('room0').length === 1);
    const b = await start('b', {});
    cut = true;
    const heldNow = async () =>
      (await registry.getSingleMetric('roundtable_inbound_held')?.get())?.values[0]?.value ?? 0;
    const given = platform.say('room0', '@data given to b while a cannot write', 'b');
    await until(() => platform.receipts.get(`b:${given}`) === 'kept');
    await until(async () => (await heldNow()) > 0);
    running.splice(running.indexOf(a), 1);
    await a.bridge.stop();
    await a.store.close();
    await until(() => platform.answers('room0').length === 2);
    const answeredBy = platform.posts.filter((p) => p.channel === 'room0' && p.agent === 'data').map((p) => p.by);
    expect(answeredBy).toEqual(['a', 'b']);
    expect(await b.store.inbox.list('b')).toEqual([]);
  });

  it("tells the receiving replica's adapter a message for another replica's room is kept once the inbox has it, and held until it can", async () => {
    const { platform, start } = await replicas(['a']);
    let inboxWrites = true;
    // Replica b's inbox writes fail on demand, as a database that cannot write fails them.
    await start('b', {
      wrap: (store) => {
        const inbox = new Proxy(store.inbox, {
          get: (target, name) =>
            name === 'put'
              ? async (...args: Parameters<PostgresStore['inbox']['put']>) => {
                  if (!inboxWrites) throw new StoreError('the database cannot write', { retryable: true });
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
    const held = platform.say('room0', '@data given to b while its inbox cannot write', 'b');
    await until(() => platform.receipts.has(`b:${held}`));
    // Not acknowledged on Slack (it comes again), and kept for a once the inbox writes again.
    expect(platform.receipts.get(`b:${held}`)).toBe('held');
    inboxWrites = true;
    await until(() => platform.answers('room0').length === 3);
  });

  it('takes up the turn in flight of a room it lost to a store outage and holds again, and answers what came after', async () => {
    // Renewals fail while `cut` (the database unreachable for the lease's length): the replica gives the room up with
    // its turn under way, then takes it again with the next message, from what the store kept.
    let cut = false;
    const { platform, started } = await replicas(['solo'], {
      wrap: (store) => {
        const leases = new Proxy(store.leases, {
          get: (target, name) =>
            name === 'renew'
              ? async (...args: Parameters<PostgresStore['leases']['renew']>) => {
                  if (cut) throw new Error('Connection terminated unexpectedly');
                  return target.renew(...args);
                }
              : Reflect.get(target, name, target),
        });
        return new Proxy(store, {
          get: (target, name) => (name === 'leases' ? leases : Reflect.get(target, name, target)),
        });
      },
    });
    let calls = 0;
    llm.respond(() =>
      ++calls === 1 ? { content: 'first answer', delayMs: LEASE_S * 1000 + 1500 } : { content: 'later answer' },
    );
    platform.say('room0', '@data the question asked before the outage');
    await until(() => calls === 1);
    cut = true;
    // Past the lease's end the replica no longer surely holds the room; the turn's answer comes after that.
    await new Promise((resolve) => setTimeout(resolve, LEASE_S * 1000 + 2500));
    cut = false;
    platform.say('room0', '@data a question after the outage');
    await until(() => platform.answers('room0').length >= 2);
    await Promise.all(started.map(({ bridge }) => bridge.idle()));
    // Each question answered once: the turn cut by the outage was taken again; its first call's answer went nowhere.
    expect(platform.answers('room0')).toEqual(['later answer', 'later answer']);
  });

  /**
   * A store whose database is unreachable while `outage.cut`: no decision commits (what arrives is held), no lease
   * renews (past its end, the room is given up with what it held) and the health check fails.
   */
  function outageStore() {
    const outage = { cut: false };
    const unreachable = () => new StoreError('Connection terminated unexpectedly', { retryable: true });
    const wrap = (store: PostgresStore): StorePort => {
      const leases = new Proxy(store.leases, {
        get: (target, name) =>
          name === 'renew'
            ? async (...args: Parameters<PostgresStore['leases']['renew']>) => {
                if (outage.cut) throw unreachable();
                return target.renew(...args);
              }
            : Reflect.get(target, name, target),
      });
      const rooms = new Proxy(store.rooms, {
        get: (target, name) =>
          name === 'commit'
            ? async (...args: Parameters<PostgresStore['rooms']['commit']>) => {
                if (outage.cut) throw unreachable();
                return target.commit(...args);
              }
            : Reflect.get(target, name, target),
      });
      const ping = async () => {
        if (outage.cut) throw unreachable();
        return store.ping();
      };
      return new Proxy(store, {
        get: (target, name) =>
          name === 'leases'
            ? leases
            : name === 'rooms'
              ? rooms
              : name === 'ping'
                ? ping
                : Reflect.get(target, name, target),
      });
    };
    return { outage, wrap };
  }

  it('stores and answers a message it held in a store outage when the outage outlasts the lease and the room is given up', async () => {
    // A room on one platform copy only (the web room) has no other source.
    const { outage, wrap } = outageStore();
    const { platform, started } = await replicas(['solo'], { wrap });
    llm.respond(() => ({ content: 'answered' }));
    platform.say('room0', '@data hello before');
    await until(() => platform.answers('room0').length === 1);
    outage.cut = true;
    const held = platform.say('room0', '@data the question asked in the outage');
    await until(() => platform.receipts.has(`solo:${held}`));
    expect(platform.receipts.get(`solo:${held}`)).toBe('held');
    // Past the lease's end: the room is given up with the message held.
    await new Promise((resolve) => setTimeout(resolve, LEASE_S * 1000 + 2500));
    outage.cut = false;
    // Bounded (a busy machine): without it taken up, the held message is never stored nor answered.
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && platform.answers('room0').length < 2; )
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(platform.answers('room0')).toEqual(['answered', 'answered']);
    const [solo] = started;
    if (!solo) throw new Error('one replica expected');
    await solo.bridge.idle();
    const texts = (await history(solo.store, 'shared', 'room0')).map((m) => m.content);
    expect(texts.filter((text) => text === '@data the question asked in the outage')).toHaveLength(1);
  }, 60_000);

  it('goes on after a decision whose commit went through but whose answer was lost (a connection reset after COMMIT)', async () => {
    // The reply's record is committed, then the connection drops before the answer comes back: the room tries again,
    // finds its message stored, and must take the state it committed rather than wait for the post for good.
    let loseAnswer = true;
    const wrap = (store: PostgresStore): StorePort => {
      const rooms = new Proxy(store.rooms, {
        get: (target, name) =>
          name === 'commit'
            ? async (...args: Parameters<PostgresStore['rooms']['commit']>) => {
                const result = await target.commit(...args);
                const reply = args[1].some((w) => w.type === 'message' && w.message.kind === 'agent');
                if (reply && loseAnswer) {
                  loseAnswer = false;
                  throw new StoreError('read ECONNRESET', { retryable: true });
                }
                return result;
              }
            : Reflect.get(target, name, target),
      });
      return new Proxy(store, {
        get: (target, name) => (name === 'rooms' ? rooms : Reflect.get(target, name, target)),
      });
    };
    const { platform, started } = await replicas(['solo'], { wrap });
    platform.say('room0', '@data first');
    await until(() => platform.answers('room0').length === 1 && !loseAnswer);
    platform.say('room0', '@data second');
    await until(() => platform.answers('room0').length === 2);
    const [solo] = started;
    if (!solo) throw new Error('one replica expected');
    await solo.bridge.idle();
    const agents = (await history(solo.store, 'shared', 'room0')).filter((m) => m.kind === 'agent');
    expect(agents.map((m) => m.content)).toEqual(['on it', 'on it']);
  });

  it('answers what it held within seconds of the store writing again, however far apart its tries had grown', async () => {
    // Tries 1, 2, 4, 8 and 16 s apart through a 16 s outage: the room's next try would come 15 s after the store is
    // back. A lease of a minute: the room is not given up meanwhile.
    const { outage, wrap } = outageStore();
    const { platform } = await replicas(['solo'], { wrap, leaseS: 60, backoff: DEFAULT_BACKOFF });
    llm.respond(() => ({ content: 'answered' }));
    platform.say('room0', '@data hello before');
    await until(() => platform.answers('room0').length === 1);
    outage.cut = true;
    const held = platform.say('room0', '@data the question asked in the outage');
    await until(() => platform.receipts.get(`solo:${held}`) === 'held');
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    outage.cut = false;
    const back = Date.now();
    await until(() => platform.answers('room0').length === 2);
    expect(Date.now() - back).toBeLessThan(6_000);
  }, 60_000);

  it("answers a catch-up's message it held in a store outage that outlasted the lease, and what is asked after", async () => {
    // The catch-up's end reached the room given up behind the message: the message is routed again to the room made
    // anew, whose asks would wait for a catch-up's end for good.
    const { outage, wrap } = outageStore();
    const { platform } = await replicas(['solo'], { wrap });
    llm.respond(() => ({ content: 'answered' }));
    platform.say('room0', '@data hello before');
    await until(() => platform.answers('room0').length === 1);
    outage.cut = true;
    const missed = platform.say('room0', '@data asked while the bridge was away', 'solo', { missed: true });
    await until(() => platform.receipts.has(`solo:${missed}`));
    expect(platform.receipts.get(`solo:${missed}`)).toBe('held');
    platform.caughtUp('solo', 'room0', missed);
    await new Promise((resolve) => setTimeout(resolve, LEASE_S * 1000 + 2500));
    outage.cut = false;
    for (const deadline = Date.now() + 20_000; Date.now() < deadline && platform.answers('room0').length < 2; )
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(platform.answers('room0')).toEqual(['answered', 'answered']);
    platform.say('room0', '@data asked after');
    await until(() => platform.answers('room0').length === 3);
  }, 60_000);

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
    expect(String(status).split('\n').slice(0, 2)).toEqual(['Room shared:room0', 'Served by: replica solo']);
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
    expect(status?.split('\n')[2]).toBe(
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
