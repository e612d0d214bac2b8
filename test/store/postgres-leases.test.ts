/**
 * Room leases on Postgres, for bridges sharing one database: one holder at a time, a fencing token that grows with
 * every change of hands, and decisions refused under a token that is no longer the room's. A throw-away cluster for
 * this file (test/helpers/postgres.ts); outside CI, without Postgres installed, it says so in one line and is skipped.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseKeeper } from '../../src/bridge/replicas/leases.js';
import { LeaseLostError, StoreError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { EMPTY_STATE } from '../../src/room/state.js';
import { PostgresLeases } from '../../src/store/postgres/leases.js';
import { createPool } from '../../src/store/postgres/pool.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { migratedPostgres } from '../helpers/postgres-suite.js';
import { until } from '../helpers/until.js';
import { human, message, stateAfter } from './contract.js';

const pg = migratedPostgres();
const plan = pg.plan;

/** Two replicas' stores on one fresh database. */
describe.runIf(plan.run)('room leases on Postgres', () => {
  let name: string;
  let a: PostgresStore;
  let b: PostgresStore;
  let room: number;
  beforeEach(async () => {
    const database = await pg.cluster().createDatabase({ from: pg.migrated() });
    name = database.name;
    a = await openPostgresStore(database.url);
    b = await openPostgresStore(database.url);
    room = (await a.rooms.open('test', 'room')).id;
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
    await pg.cluster().dropDatabase(name);
  });

  const LONG = 60_000;

  it('gives a room to one replica at a time, and keeps its token while it renews', async () => {
    const first = await a.leases.acquire(room, 'a', LONG);
    expect(first?.token).toBe(1);
    expect(await b.leases.acquire(room, 'b', LONG)).toBeUndefined();
    expect((await a.leases.acquire(room, 'a', LONG))?.token).toBe(1);
    const [renewed] = await a.leases.renew('a', [room], LONG);
    expect(renewed?.token).toBe(1);
    expect(renewed?.expiresAt).toBeGreaterThanOrEqual(first?.expiresAt ?? Number.POSITIVE_INFINITY);
    expect(await b.leases.renew('b', [room], LONG)).toEqual([]);
    expect((await b.leases.holders()).map((l) => [l.roomId, l.holder, l.token])).toEqual([[room, 'a', 1]]);
  });

  it('lets exactly one of several replicas take a free room at once', async () => {
    const taken = await Promise.all(
      ['a', 'b', 'c', 'd'].map((holder, i) => (i % 2 ? b : a).leases.acquire(room, holder, LONG)),
    );
    expect(taken.filter((lease) => lease !== undefined)).toHaveLength(1);
  });

  it('hands a lapsed lease to another replica with a larger token, and the old holder cannot renew it', async () => {
    expect((await a.leases.acquire(room, 'a', 100))?.token).toBe(1);
    let taken: Awaited<ReturnType<typeof b.leases.acquire>>;
    await until(async () => {
      taken = await b.leases.acquire(room, 'b', LONG);
      return taken !== undefined;
    });
    expect(taken?.token).toBe(2);
    expect(await a.leases.renew('a', [room], LONG)).toEqual([]);
    expect(await a.leases.acquire(room, 'a', LONG)).toBeUndefined();
  });

  it('lists a room handed over with work, or whose lease ran out, among the lapsed; never a released one', async () => {
    const other = (await a.rooms.open('test', 'other')).id;
    await a.leases.acquire(room, 'a', LONG);
    await a.leases.acquire(other, 'a', LONG);
    expect(await a.leases.lapsed()).toEqual([]);
    expect(await a.leases.handOver('a', [room])).toEqual([room]);
    expect(await a.leases.release('a', [other])).toEqual([other]);
    expect(await b.leases.lapsed()).toEqual([room]);
    expect((await b.leases.acquire(room, 'b', LONG))?.token).toBe(2);
    expect(await b.leases.lapsed()).toEqual([]);
  });

  it('lists the notes of rooms a replica serves or nobody does, never those of a room another live replica serves', async () => {
    const other = (await a.rooms.open('test', 'other')).id;
    const note = { kind: 'cancel-requests' as const, ids: [1] };
    await a.rooms.commit(
      room,
      ['test:room', 'test:other', 'test:unopened'].map((to, i) => ({
        type: 'note' as const,
        id: `n${i}`,
        room: to,
        note,
      })),
      EMPTY_STATE,
    );
    await a.leases.acquire(room, 'a', LONG);
    await b.leases.acquire(other, 'b', LONG);
    expect((await a.inbox.notes('a')).map((n) => n.room)).toEqual(['test:room', 'test:unopened']);
    expect((await b.inbox.notes('b')).map((n) => n.room)).toEqual(['test:other', 'test:unopened']);
    await b.leases.release('b');
    expect((await a.inbox.notes('a')).map((n) => n.room)).toEqual(['test:room', 'test:other', 'test:unopened']);
  });

  it('gives each bridge its own blocks of request ids, one after another, however many ask at once', async () => {
    const blocks = await Promise.all([a, b, a, b].map((store) => store.requestIds.reserve()));
    expect(blocks.every((block) => block.count === 1000)).toBe(true);
    expect(blocks.map((block) => block.first).sort((x, y) => x - y)).toEqual([1, 1001, 2001, 3001]);
  });

  it('fails taking a room while the database is away as a store failure worth another try', async () => {
    // A room that cannot be taken now is held and tried again; any other failure would drop its message.
    const away = new PostgresLeases(
      createPool('postgres://postgres@127.0.0.1:1/away', { timeouts: { connectMs: 500 } }),
    );
    const failure = await away.acquire(room, 'a', LONG).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).retryable).toBe(true);
  });

  it('frees a released room at once, and its next holder gets a larger token', async () => {
    await a.leases.acquire(room, 'a', LONG);
    expect(await a.leases.release('a')).toEqual([room]);
    expect(await a.leases.holders()).toEqual([]);
    expect((await b.leases.acquire(room, 'b', LONG))?.token).toBe(2);
    expect(await a.leases.release('a', [room])).toEqual([]);
  });

  it("refuses a decision under a token that is no longer the room's, storing none of it", async () => {
    const lease = await a.leases.acquire(room, 'a', 1500);
    const m1 = human(1, 'before', ['m1']);
    expect(await a.rooms.commit(room, [message(m1)], stateAfter(EMPTY_STATE, m1), { token: lease?.token ?? 0 })).toBe(
      'done',
    );
    await until(async () => (await b.leases.acquire(room, 'b', LONG)) !== undefined);
    const m2 = human(2, 'from the old holder', ['m2']);
    const stale = a.rooms.commit(room, [message(m2)], stateAfter(stateAfter(EMPTY_STATE, m1), m2), {
      token: lease?.token ?? 0,
    });
    await expect(stale).rejects.toBeInstanceOf(LeaseLostError);
    await expect(stale).rejects.toThrow(/^room \d+: its lease \(token 1\) is no longer this bridge's/);
    expect((await b.rooms.history(room, 10)).map((m) => m.content)).toEqual(['before']);
    expect(await b.rooms.seen(room, 'm2')).toBe(false);
    const m3 = human(2, 'from the new holder', ['m3']);
    expect(await b.rooms.commit(room, [message(m3)], stateAfter(stateAfter(EMPTY_STATE, m1), m3), { token: 2 })).toBe(
      'done',
    );
    expect((await a.rooms.history(room, 10)).map((m) => m.content)).toEqual(['before', 'from the new holder']);
  });

  it('refuses a fenced decision for a room no replica holds', async () => {
    const m1 = human(1, 'hello', ['m1']);
    await expect(a.rooms.commit(room, [message(m1)], stateAfter(EMPTY_STATE, m1), { token: 1 })).rejects.toThrow(
      LeaseLostError,
    );
    expect(await a.rooms.history(room, 10)).toEqual([]);
  });

  it('tells a fenced duplicate from a stale token, and refuses an empty decision under a stale one', async () => {
    const lease = await a.leases.acquire(room, 'a', LONG);
    const fence = { token: lease?.token ?? 0 };
    const m1 = human(1, 'once', ['m1']);
    const state = stateAfter(EMPTY_STATE, m1);
    expect(await a.rooms.commit(room, [message(m1)], state, fence)).toBe('done');
    expect(await a.rooms.commit(room, [message(m1)], state, fence)).toBe('duplicate');
    expect(await a.rooms.commit(room, [], state, fence)).toBe('done');
    await a.leases.release('a');
    await expect(a.rooms.commit(room, [message(human(2, 'late', ['m2']))], state, fence)).rejects.toThrow(
      LeaseLostError,
    );
    await expect(a.rooms.commit(room, [], state, fence)).rejects.toThrow(LeaseLostError);
  });

  describe('a bridge keeping its leases', () => {
    const keepers: LeaseKeeper[] = [];
    afterEach(async () => {
      await Promise.all(keepers.splice(0).map((keeper) => keeper.stop()));
    });
    const keeper = (store: PostgresStore, replica: string, ttlMs: number, lost: number[] = []) => {
      const made = new LeaseKeeper({
        leases: store.leases,
        replica,
        ttlMs,
        clock: Date.now,
        log: silentLogger(),
      });
      made.onLost((id) => lost.push(id));
      keepers.push(made);
      return made;
    };

    it('keeps a room past many lease lengths by renewing it, and frees it at once when it stops', async () => {
      const lost: number[] = [];
      const first = keeper(a, 'a', 600, lost);
      expect(await first.take(room)).toEqual({ token: 1 });
      first.start();
      const second = keeper(b, 'b', 600);
      const until3x = Date.now() + 1800;
      while (Date.now() < until3x) {
        expect(await second.take(room)).toBeUndefined();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(first.fence(room)).toEqual({ token: 1 });
      expect(lost).toEqual([]);
      await first.stop();
      expect(await second.take(room)).toEqual({ token: 2 });
    });

    it('stops acting on a room before a lease it did not renew can lapse, and another bridge takes it', async () => {
      const lost: number[] = [];
      let now = Date.now();
      const paused = new LeaseKeeper({
        leases: a.leases,
        replica: 'a',
        ttlMs: 10_000,
        clock: () => now,
        log: silentLogger(),
      });
      keepers.push(paused);
      paused.onLost((id) => lost.push(id));
      const askedAt = now;
      expect(await paused.take(room)).toEqual({ token: 1 }); // never renewed: as if paused (SIGSTOP) past its lease
      // It counts from when it asked (never later than the database's start of the lease) and stops 2 s early.
      now = askedAt + 10_000 - 2000 - 1;
      expect(paused.fence(room)).toEqual({ token: 1 });
      expect(lost).toEqual([]);
      now += 1;
      expect(paused.fence(room)).toBeUndefined();
      expect(lost).toEqual([room]);
      // Once the database's lease lapses, another bridge takes the room with a larger token.
      await a.pool.query('UPDATE room_leases SET expires_at = expires_at - 10000');
      const other = keeper(b, 'b', LONG);
      expect(await other.take(room)).toEqual({ token: 2 });
      // Renewing now finds nothing to renew, and taking it back waits for the other's lease.
      await paused.renew();
      expect(await paused.take(room)).toBeUndefined();
    });

    it('gives up a room its renewal finds in other hands, though its own count says the lease is live', async () => {
      const lost: number[] = [];
      const slow = keeper(a, 'a', LONG, lost);
      await slow.take(room);
      // Its clock and the database's disagree (a jump, a stall): the database gave the room to another bridge.
      await b.pool.query("UPDATE room_leases SET holder = 'b', token = token + 1 WHERE room_id = $1", [room]);
      expect(slow.fence(room)).toEqual({ token: 1 });
      await slow.renew();
      expect(lost).toEqual([room]);
      expect(slow.fence(room)).toBeUndefined();
      expect(slow.count).toBe(0);
    });
  });

  describe('the registry of replicas', () => {
    const info = (id: string, engine: string | null = 'e1') => ({ id, host: `host-${id}`, engine, workspaces: 'bind' });
    /** Ages a replica's last sighting by `ms` (as if it had not been seen since). */
    const age = (id: string, ms: number) =>
      a.pool.query('UPDATE replicas SET seen_at = seen_at - $2 WHERE id = $1', [id, ms]);

    it('lists the replicas seen within a lease, with host, engine and workspaces; a beat keeps one live', async () => {
      await a.replicas.join(info('a'));
      await b.replicas.join(info('b', null));
      expect((await a.replicas.live(LONG)).map((r) => [r.id, r.host, r.engine, r.workspaces])).toEqual([
        ['a', 'host-a', 'e1', 'bind'],
        ['b', 'host-b', null, 'bind'],
      ]);
      await age('a', 2 * LONG);
      await age('b', 2 * LONG);
      await b.replicas.beat(info('b', null));
      expect((await a.replicas.live(LONG)).map((r) => r.id)).toEqual(['b']);
      await b.replicas.leave('b');
      expect(await a.replicas.live(LONG)).toEqual([]);
    });

    it("keeps a live replica's holds and spends those of one no longer seen, once", async () => {
      const scopes = [{ scope: 'bridge', limit: null, amount: 100 }];
      await a.replicas.join(info('a'));
      await b.replicas.join(info('b'));
      await a.spend.reserve({ id: 'a-call', day: 'd', scopes, at: 1, replica: 'a' });
      // b starts again (its previous run's holds go) while a's call is under way.
      expect(await b.spend.settleAbandoned({ replica: 'b', liveMs: LONG, own: true })).toBe(0);
      expect(await b.spend.day('d')).toEqual([{ scope: 'bridge', spent: 0, reserved: 100 }]);
      // a dies: once it has not been seen for a lease, its hold is spent whole, by one replica only.
      await age('a', 2 * LONG);
      const settled = await Promise.all([
        b.spend.settleAbandoned({ replica: 'b', liveMs: LONG, own: false }),
        b.spend.settleAbandoned({ replica: 'b', liveMs: LONG, own: false }),
      ]);
      expect(settled.sort()).toEqual([0, 1]);
      expect(await b.spend.day('d')).toEqual([{ scope: 'bridge', spent: 100, reserved: 0 }]);
    });
  });
});
