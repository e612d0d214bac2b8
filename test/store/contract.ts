/**
 * The store contract: what every implementation of the store port does, as one suite. Each implementation calls
 * `storeContract` once with a way to make an empty database (SQLite: a file in a temporary folder).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { RequestRow, StoredMessage, Write } from '../../src/room/effects.js';
import type { ChatRequest, Incoming, Note, ToolRun } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';
import type { StorePort } from '../../src/store/index.js';
import { storedMessage } from '../../src/store/stored-message.js';

/** An empty database for one test: `open` gives a store over it (again after `close`, for a restart). */
export interface TestDatabase {
  open(): Promise<StorePort>;
  drop(): Promise<void>;
}

type Message = StoredMessage & { readonly toolRuns?: readonly ToolRun[] };

export const human = (seq: number, text: string, ids: string[], patch: Partial<Message> = {}): Message => ({
  seq,
  author: 'alice',
  authorId: 'u1',
  kind: 'human',
  mentions: [],
  requests: [],
  audience: null,
  at: 1000 + seq,
  text,
  platformIds: ids,
  ...patch,
});

const agentMessage = (seq: number, text: string, ids: string[], patch: Partial<Message> = {}): Message =>
  human(seq, text, ids, { author: 'code', authorId: 'b1', kind: 'agent', ...patch });

export const message = (m: Message): Write => ({ type: 'message', message: m });

/** The state a decision that stores these messages leaves (their seq, and lastHuman for a human's). */
export function stateAfter(state: RoomState, ...messages: Message[]): RoomState {
  let next = state;
  for (const m of messages) {
    next = { ...next, seq: m.seq, ...(m.kind === 'human' ? { lastHuman: m.seq } : {}) };
  }
  return next;
}

const request = (id: number, patch: Partial<RequestRow> = {}): RequestRow => ({
  id,
  requester: 'code',
  origin: 'test:a',
  target: 'test:b',
  parent: null,
  text: 'what do you think?',
  awaited: [
    { name: 'data', kind: 'agent' },
    { name: 'alice', kind: 'human' },
  ],
  answers: [],
  status: 'open',
  openedAt: 10,
  deadline: 600_010,
  opener: { people: ['alice'], audience: null },
  ...patch,
});

const SETUP: RoomSetup = {
  key: 'test:room',
  agents: [
    { name: 'code', activation: 'mention' },
    { name: 'data', activation: 'mention' },
  ],
  turnLimit: 20,
  kind: 'room',
  privacy: 'off',
  requestTimeoutMs: 600_000,
  editWindowMs: 120_000,
  maxToolRounds: 8,
  batching: false,
};

export function storeContract(name: string, database: () => Promise<TestDatabase>): void {
  describe(`store contract: ${name}`, () => {
    let db: TestDatabase;
    let store: StorePort;

    beforeEach(async () => {
      db = await database();
      store = await db.open();
    });
    afterEach(async () => {
      await store.close();
      await db.drop();
    });

    /** A restart: the store is closed and opened again over the same data. */
    async function reopen(): Promise<StorePort> {
      await store.close();
      store = await db.open();
      return store;
    }

    describe('rooms', () => {
      it('opens a room once, new without a state, and keeps whose DM it is', async () => {
        const dm = await store.rooms.open('discord', 'dm1', 'code');
        expect(dm).toMatchObject({ platform: 'discord', channel: 'dm1', key: 'discord:dm1', directAgent: 'code' });
        expect(dm.state).toBeNull();
        const room = await store.rooms.open('discord', 'c1');
        expect(room.directAgent).toBeNull();
        await reopen();
        expect(await store.rooms.open('discord', 'dm1')).toMatchObject({ id: dm.id, directAgent: 'code' });
        expect((await store.rooms.all()).map((r) => r.key)).toEqual(['discord:dm1', 'discord:c1']);
      });

      it('stores the messages of a decision: the newest N, oldest first, with mentions, requests, audience and tool runs', async () => {
        const room = await store.rooms.open('console', 'main');
        let state = EMPTY_STATE;
        for (let i = 1; i <= 5; i++) {
          const m = human(i, `m${i} @code`, [`id${i}`], { mentions: ['code'], requests: ['code'] });
          state = stateAfter(state, m);
          expect(await store.rooms.commit(room.id, [message(m)], state)).toBe('done');
        }
        const runs = [{ tool: 'bash', input: 'ls', output: 'a.csv' }];
        const reply = agentMessage(6, 'ran it', ['id6'], { audience: ['alice', 'code'], toolRuns: runs, post: 3 });
        await store.rooms.commit(room.id, [message(reply)], stateAfter(state, reply));
        const last = await store.rooms.history(room.id, 3);
        expect(last.map((m) => m.content)).toEqual(['m4 @code', 'm5 @code', 'ran it']);
        expect(last[0]).toMatchObject({ author: 'alice', authorId: 'u1', kind: 'human', mentions: ['code'], at: 1004 });
        expect(last[0]?.requests).toEqual(['code']);
        expect(last[0]?.audience).toBeUndefined();
        expect(last[0]?.toolRuns).toEqual([]);
        expect(last[2]).toMatchObject({ kind: 'agent', audience: ['alice', 'code'], toolRuns: runs });
        // Row ids order the history and name the message for its embedding.
        expect(last[1]?.id).toBeLessThan(last[2]?.id ?? 0);
      });

      it('tells the row ids of the messages a decision stored, each read back as it was written', async () => {
        const room = await store.rooms.open('console', 'ids');
        const first = human(1, 'see the file @code', ['p1'], {
          mentions: ['code'],
          requests: ['code'],
          files: ['[file: uploads/a.csv (text/csv, 1.2 KB)]'],
        });
        const runs = [{ tool: 'bash', input: 'wc -l a.csv', output: '3 a.csv' }];
        const reply = agentMessage(2, 'three lines', ['p2', 'p3'], { audience: ['alice', 'code'], toolRuns: runs });
        const stored: number[] = [];
        const writes = [message(first), message(reply)];
        expect(
          await store.rooms.commit(room.id, writes, stateAfter(EMPTY_STATE, first, reply), undefined, stored),
        ).toBe('done');
        const read = await store.rooms.history(room.id, 10);
        expect(stored).toEqual(read.map((m) => m.id));
        expect([storedMessage(stored[0] ?? 0, first), storedMessage(stored[1] ?? 0, reply)]).toEqual(read);
        // A duplicate stores nothing: the ids it names are not the room's.
        const again: number[] = [];
        const dup = human(3, 'again', ['p3']);
        expect(await store.rooms.commit(room.id, [message(dup)], stateAfter(EMPTY_STATE, dup), undefined, again)).toBe(
          'duplicate',
        );
      });

      it('keeps token counts with stored messages, per encoding, across a restart', async () => {
        const room = await store.rooms.open('console', 'tokens');
        const a = human(1, 'one', ['t1']);
        const b = human(2, 'two', ['t2']);
        await store.rooms.commit(room.id, [message(a), message(b)], stateAfter(EMPTY_STATE, a, b));
        const [first, second] = await store.rooms.history(room.id, 2);
        expect(first?.tokens).toBeUndefined();
        await store.rooms.keepTokens([{ id: first?.id ?? 0, tokens: { o200k_base: 7 } }]);
        await store.rooms.keepTokens([
          { id: first?.id ?? 0, tokens: { cl100k_base: 8 } },
          { id: second?.id ?? 0, tokens: { o200k_base: 9, cl100k_base: 10 } },
        ]);
        await reopen();
        const read = await store.rooms.history(room.id, 2);
        expect(read.map((m) => m.tokens)).toEqual([
          { o200k_base: 7, cl100k_base: 8 },
          { o200k_base: 9, cl100k_base: 10 },
        ]);
        // A message no longer stored is skipped.
        await store.rooms.clear(room.id);
        await expect(
          store.rooms.keepTokens([{ id: first?.id ?? 0, tokens: { o200k_base: 1 } }]),
        ).resolves.toBeUndefined();
      });

      it("keeps why a room decided: each message's routing and the other records, by the message they are about", async () => {
        const room = await store.rooms.open('discord', 'c1');
        const routed = (seq: number, woken: string[]) =>
          ({ type: 'decision', seq, at: 5000 + seq, record: { kind: 'routed', seq, author: 'alice', woken } }) as const;
        const first = human(1, '@code hi', ['m1'], { mentions: ['code'] });
        const state1 = stateAfter(EMPTY_STATE, first);
        expect(await store.rooms.commit(room.id, [message(first), routed(1, ['code:addressed'])], state1)).toBe('done');
        const second = human(2, 'and you?', ['m2']);
        const state2 = stateAfter(state1, second);
        const passed = {
          type: 'decision',
          seq: 1,
          at: 6000,
          record: { kind: 'passed', agent: 'code', about: 1 },
        } as const;
        const handBack = {
          type: 'decision',
          seq: 2,
          at: 6001,
          record: { kind: 'hand-back', reason: 'turn limit' },
        } as const;
        expect(await store.rooms.commit(room.id, [passed, handBack, message(second), routed(2, [])], state2)).toBe(
          'done',
        );
        // A duplicate decision stores no record either.
        expect(await store.rooms.commit(room.id, [message(second), routed(2, ['data:always'])], state2)).toBe(
          'duplicate',
        );
        expect(await store.rooms.decisions(room.id, 1, 2)).toEqual([
          { seq: 1, at: 5001, record: { kind: 'routed', seq: 1, author: 'alice', woken: ['code:addressed'] } },
          { seq: 1, at: 6000, record: { kind: 'passed', agent: 'code', about: 1 } },
          { seq: 2, at: 5002, record: { kind: 'routed', seq: 2, author: 'alice', woken: [] } },
          { seq: 2, at: 6001, record: { kind: 'hand-back', reason: 'turn limit' } },
        ]);
        expect(await store.rooms.decisions(room.id, 2, 2)).toHaveLength(2);
      });

      it('stores a platform message once, whoever delivers it: a decision storing it again stores nothing', async () => {
        const room = await store.rooms.open('discord', 'c1');
        const first = human(1, 'hi', ['m1']);
        const state1 = stateAfter(EMPTY_STATE, first);
        await store.rooms.commit(room.id, [message(first)], state1);
        // The same message again, decided afresh: its other writes and its state are not stored either.
        const again = human(2, 'hi', ['m1']);
        const writes: Write[] = [
          { type: 'request', request: request(7) },
          { type: 'note', id: 'n1', room: 'discord:c2', note: { kind: 'cancel-requests', ids: [7] } },
          message(again),
        ];
        const state2 = { ...stateAfter(state1, again), humans: ['alice'] };
        expect(await store.rooms.commit(room.id, writes, state2)).toBe('duplicate');
        expect((await store.rooms.history(room.id, 10)).map((m) => m.content)).toEqual(['hi']);
        expect(await store.rooms.requests()).toEqual([]);
        expect(await store.rooms.notes()).toEqual([]);
        expect(await store.rooms.maxRequestId()).toBe(0);
        expect((await store.rooms.open('discord', 'c1')).state).toEqual(state1);
        // The same id in another room is another message.
        const other = await store.rooms.open('discord', 'c2');
        expect(await store.rooms.commit(other.id, [message(human(1, 'hi', ['m1']))], state1)).toBe('done');
      });

      it('rolls back the messages stored before the duplicate in the same decision', async () => {
        const room = await store.rooms.open('discord', 'c1');
        const known = human(1, 'known', ['k']);
        await store.rooms.commit(room.id, [message(known)], stateAfter(EMPTY_STATE, known));
        const fresh = human(2, 'fresh', ['f']);
        const dup = human(3, 'known again', ['k']);
        expect(
          await store.rooms.commit(room.id, [message(fresh), message(dup)], stateAfter(EMPTY_STATE, fresh, dup)),
        ).toBe('duplicate');
        expect(await store.rooms.seen(room.id, 'f')).toBe(false);
        expect((await store.rooms.history(room.id, 10)).map((m) => m.content)).toEqual(['known']);
      });

      it("stores none of a decision's writes when one of them fails", async () => {
        const room = await store.rooms.open('discord', 'c1');
        const stored = human(1, 'stored', ['s']);
        await store.rooms.commit(room.id, [message(stored)], stateAfter(EMPTY_STATE, stored));
        const lost = human(2, 'lost', ['l']);
        // A request the schema refuses (its status is none the table allows), after a message and a note.
        const bad = { ...request(3), status: 'lost' } as unknown as RequestRow;
        const writes: Write[] = [
          message(lost),
          { type: 'note', id: 'n1', room: 'discord:c2', note: { kind: 'cancel-requests', ids: [3] } },
          { type: 'request', request: bad },
        ];
        await expect(
          store.rooms.commit(room.id, writes, { ...stateAfter(EMPTY_STATE, stored, lost), humans: ['alice'] }),
        ).rejects.toThrow();
        expect(await store.rooms.seen(room.id, 'l')).toBe(false);
        expect(await store.rooms.notes()).toEqual([]);
        expect(await store.rooms.requests()).toEqual([]);
        await reopen();
        expect((await store.rooms.open('discord', 'c1')).state).toEqual(stateAfter(EMPTY_STATE, stored));
        // The room goes on from the state last committed.
        expect(await store.rooms.commit(room.id, [message(lost)], stateAfter(EMPTY_STATE, stored, lost))).toBe('done');
      });

      it('recognises every chunk id of a reply posted in several parts', async () => {
        const room = await store.rooms.open('discord', 'c1');
        const reply = agentMessage(1, 'long reply', ['p1', 'p2', 'p3']);
        await store.rooms.commit(room.id, [message(reply)], stateAfter(EMPTY_STATE, reply));
        for (const id of ['p1', 'p2', 'p3']) {
          expect(await store.rooms.seen(room.id, id)).toBe(true);
          expect((await store.rooms.byPlatformId(room.id, id))?.content).toBe('long reply');
        }
        expect(await store.rooms.seen(room.id, 'p4')).toBe(false);
        expect(await store.rooms.byPlatformId(room.id, 'p4')).toBeUndefined();
        const echo2 = agentMessage(2, 'echo of chunk 2', ['p2']);
        expect(await store.rooms.commit(room.id, [message(echo2)], stateAfter(EMPTY_STATE, reply, echo2))).toBe(
          'duplicate',
        );
        const echoes = agentMessage(2, 'echo of a new chunk and an old one', ['q1', 'p3']);
        expect(await store.rooms.commit(room.id, [message(echoes)], stateAfter(EMPTY_STATE, reply, echoes))).toBe(
          'duplicate',
        );
        expect(await store.rooms.seen(room.id, 'q1')).toBe(false);
        expect(await store.rooms.lastPlatformMessageId('discord', 'c1')).toBe('p1');
        expect(await store.rooms.history(room.id, 10)).toHaveLength(1);
      });

      it("clears a room's messages but keeps their platform ids (chunks too), so none is stored again", async () => {
        const room = await store.rooms.open('console', 'main');
        const old = human(1, 'old', ['x']);
        const reply = agentMessage(2, 'reply', ['y1', 'y2']);
        await store.rooms.commit(room.id, [message(old), message(reply)], stateAfter(EMPTY_STATE, old, reply));
        await store.rooms.clear(room.id);
        expect(await store.rooms.history(room.id, 10)).toEqual([]);
        expect(await store.rooms.byPlatformId(room.id, 'x')).toBeUndefined();
        for (const id of ['x', 'y1', 'y2']) expect(await store.rooms.seen(room.id, id)).toBe(true);
        await reopen();
        const again = human(3, 'old', ['x']);
        expect(await store.rooms.commit(room.id, [message(again)], stateAfter(EMPTY_STATE, old, reply, again))).toBe(
          'duplicate',
        );
        const chunk = agentMessage(3, 'echo', ['y2']);
        expect(await store.rooms.commit(room.id, [message(chunk)], stateAfter(EMPTY_STATE, old, reply, chunk))).toBe(
          'duplicate',
        );
      });

      it('tells whom a platform message and its stored edits addressed', async () => {
        const room = await store.rooms.open('discord', 'c1');
        expect(await store.rooms.addressedBy(room.id, '123')).toBeUndefined();
        const writes = [
          human(1, 'hi @code', ['123'], { mentions: ['code'] }),
          human(2, '(edited) hi @code @data', ['123:edit:5'], { mentions: ['data'] }),
          human(3, 'other', ['1234:edit:5'], { mentions: ['reviewer'] }),
        ];
        await store.rooms.commit(room.id, writes.map(message), stateAfter(EMPTY_STATE, ...writes));
        expect(await store.rooms.addressedBy(room.id, '123')).toEqual(['code', 'data']);
        const other = await store.rooms.open('discord', 'c2');
        expect(await store.rooms.addressedBy(other.id, '123')).toBeUndefined();
      });

      it('keeps catch-up marks and tells the newest platform id of a room', async () => {
        const room = await store.rooms.open('slack', 'C1');
        expect(await store.rooms.caughtUp('slack', 'C1')).toBeUndefined();
        expect(await store.rooms.lastPlatformMessageId('slack', 'C1')).toBeUndefined();
        const a = human(1, 'a', ['1.0001']);
        const b = human(2, 'b', ['1.0002']);
        await store.rooms.commit(room.id, [message(a), message(b)], stateAfter(EMPTY_STATE, a, b));
        await store.rooms.setCaughtUp('slack', 'C1', '1.0001');
        await reopen();
        expect(await store.rooms.caughtUp('slack', 'C1')).toBe('1.0001');
        expect(await store.rooms.lastPlatformMessageId('slack', 'C1')).toBe('1.0002');
      });

      it("tells a room's newest platform message id, never an edit's own id (a catch-up starts after a message)", async () => {
        const room = await store.rooms.open('discord', 'c1');
        const writes = [
          human(1, 'first', ['100']),
          human(2, 'second', ['200']),
          human(3, '(edited) first, again', ['100:edit:5']),
        ];
        await store.rooms.commit(room.id, writes.map(message), stateAfter(EMPTY_STATE, ...writes));
        expect(await store.rooms.lastPlatformMessageId('discord', 'c1')).toBe('200');
      });

      it("lists a platform's rooms, most recently active first, with the DM's agent", async () => {
        const quiet = await store.rooms.open('discord', 'quiet');
        const busy = await store.rooms.open('discord', 'busy');
        const dm = await store.rooms.open('discord', 'dm', 'code');
        await store.rooms.open('slack', 'elsewhere');
        await store.rooms.commit(dm.id, [message(human(1, 'a', ['1']))], stateAfter(EMPTY_STATE, human(1, 'a', [])));
        await store.rooms.commit(busy.id, [message(human(1, 'b', ['2']))], stateAfter(EMPTY_STATE, human(1, 'b', [])));
        expect(await store.rooms.active('discord')).toEqual([
          { channel: 'busy' },
          { channel: 'dm', agent: 'code' },
          { channel: quiet.channel },
        ]);
      });
    });

    describe("a room's state", () => {
      it('reloads the state last committed: after writes skipped, after /clear and across a restart', async () => {
        const room = await store.rooms.open('test', 'room');
        const check = async (expected: RoomState) => {
          expect((await store.rooms.open('test', 'room')).state).toEqual(expected);
          expect((await store.rooms.all()).find((r) => r.id === room.id)?.state).toEqual(expected);
        };
        // A human message that changes only seq and lastHuman, then one that changes the humans seen.
        const a = human(1, 'a', ['a']);
        let state: RoomState = { ...stateAfter(EMPTY_STATE, a), humans: ['alice'] };
        await store.rooms.commit(room.id, [message(a)], state);
        await check(state);
        for (let seq = 2; seq <= 4; seq++) {
          const m = human(seq, `m${seq}`, [`m${seq}`]);
          state = stateAfter(state, m);
          await store.rooms.commit(room.id, [message(m)], state);
          await check(state);
        }
        await reopen();
        await check(state);
        // An agent message changes the count; a human one after it only seq and lastHuman again.
        const reply = agentMessage(5, 'reply', ['r']);
        state = { ...stateAfter(state, reply), control: { holder: 'agents', count: 1 } };
        await store.rooms.commit(room.id, [message(reply)], state);
        const b = human(6, 'b', ['b']);
        state = stateAfter(state, b);
        await store.rooms.commit(room.id, [message(b)], state);
        await check(state);
        // /clear forgets the messages, not what they told the state.
        await store.rooms.clear(room.id);
        await check(state);
        await reopen();
        await check(state);
        const c = human(7, 'c', ['c']);
        state = stateAfter(state, c);
        await store.rooms.commit(room.id, [message(c)], state);
        await check(state);
        await store.rooms.clear(room.id);
        await reopen();
        await check(state);
        // A decision without messages that changes nothing is stored as it is.
        await store.rooms.commit(room.id, [], state);
        await reopen();
        await check(state);
      });

      it('reloads a state whose seq moved without a message (it is written, not derived)', async () => {
        const room = await store.rooms.open('test', 'room');
        const a = human(1, 'a', ['a']);
        await store.rooms.commit(room.id, [message(a)], stateAfter(EMPTY_STATE, a));
        const ahead = { ...stateAfter(EMPTY_STATE, a), seq: 9, lastHuman: 8 };
        await store.rooms.commit(room.id, [], ahead);
        await reopen();
        expect((await store.rooms.open('test', 'room')).state).toEqual(ahead);
      });

      it('reloads each state a real conversation leaves, decision after decision', async () => {
        const room = await store.rooms.open('test', 'room');
        let state = EMPTY_STATE;
        let ids = 0;
        const step = async (event: Parameters<typeof decide>[2]) => {
          const decision = decide(SETUP, state, event, { nextRequestId: (await store.rooms.maxRequestId()) + 1 });
          expect(await store.rooms.commit(room.id, decision.writes, decision.state)).toBe('done');
          state = decision.state;
          expect((await store.rooms.open('test', 'room')).state).toEqual(state);
          return decision;
        };
        const say = (text: string, now: number): Incoming => ({
          author: 'alice',
          authorId: 'u1',
          kind: 'human',
          text,
          platformIds: [`h${++ids}`],
          at: now,
        });
        for (let i = 0; i < 3; i++)
          await step({ type: 'message', now: 100 + i, message: say(`chatter ${i}`, 100 + i) });
        const asked = await step({ type: 'message', now: 200, message: say('@code and @data, thoughts?', 200) });
        expect(asked.effects.some((e) => e.type === 'ask')).toBe(true);
        for (let turn = 0; turn < 2 && state.current; turn++) {
          const ask = state.current.ask;
          const answered = await step({
            type: 'answer',
            now: 300 + turn,
            ask: ask.id,
            outcome: { kind: 'reply', text: `${ask.agent} says hi` },
          });
          const post = answered.effects.find((e) => e.type === 'post');
          if (post?.type !== 'post') throw new Error('the reply was not posted');
          await step({ type: 'posted', now: 310 + turn, post: post.post.id, platformIds: [`p${turn}`] });
        }
        await step({ type: 'message', now: 400, message: say('thanks', 400) });
        expect((await store.rooms.history(room.id, 20)).map((m) => m.content)).toEqual([
          'chatter 0',
          'chatter 1',
          'chatter 2',
          '@code and @data, thoughts?',
          'code says hi',
          'data says hi',
          'thanks',
        ]);
        await reopen();
        expect((await store.rooms.open('test', 'room')).state).toEqual(state);
      });

      it("keeps an operator's privacy with the state", async () => {
        const room = await store.rooms.open('test', 'room');
        const state = { ...EMPTY_STATE, privacy: 'mentions' as const };
        await store.rooms.commit(room.id, [{ type: 'privacy', mode: 'mentions' }], state);
        await reopen();
        expect((await store.rooms.open('test', 'room')).state?.privacy).toBe('mentions');
      });
    });

    describe('requests and notes', () => {
      it('upserts requests by id, closes them, and lists those of a room (origin or target) or all', async () => {
        const a = await store.rooms.open('test', 'a');
        expect(await store.rooms.maxRequestId()).toBe(0);
        await store.rooms.commit(a.id, [{ type: 'request', request: request(1) }], EMPTY_STATE);
        await store.rooms.commit(
          a.id,
          [{ type: 'request', request: request(2, { origin: 'test:c', target: 'test:c', parent: 1 }) }],
          EMPTY_STATE,
        );
        const answered = request(1, {
          answers: [
            { participant: 'data', text: 'fine', outcome: 'answer', at: 20 },
            { participant: 'alice', text: '', outcome: 'pass', at: 21 },
          ],
          status: 'answered',
        });
        await store.rooms.commit(a.id, [{ type: 'request', request: answered }], EMPTY_STATE);
        expect(await store.rooms.requests('test:b')).toEqual([answered]);
        await store.rooms.commit(a.id, [{ type: 'request-status', id: 1, status: 'closed' }], EMPTY_STATE);
        await reopen();
        expect(await store.rooms.requests('test:a')).toEqual([{ ...answered, status: 'closed' }]);
        expect((await store.rooms.requests()).map((r) => [r.id, r.status, r.parent])).toEqual([
          [1, 'closed', null],
          [2, 'open', 1],
        ]);
        expect(await store.rooms.requests('test:elsewhere')).toEqual([]);
        expect(await store.rooms.maxRequestId()).toBe(2);
      });

      it('keeps notes for other rooms until they are taken, across a restart', async () => {
        const a = await store.rooms.open('test', 'a');
        const b = await store.rooms.open('test', 'b');
        const settled: Note = {
          kind: 'request-settled',
          request: {
            id: 1,
            requester: 'code',
            parent: null,
            text: 'q',
            status: 'answered',
            awaited: [{ name: 'data', kind: 'agent' }],
            answers: [{ participant: 'data', text: 'a', outcome: 'answer', at: 5 }],
            opener: { people: [], audience: null },
          },
        };
        await store.rooms.commit(
          a.id,
          [
            { type: 'note', id: 'a:1', room: 'test:b', note: { kind: 'request-opened', id: 1, target: 'test:a' } },
            { type: 'note', id: 'a:2', room: 'test:b', note: settled },
          ],
          EMPTY_STATE,
        );
        await store.rooms.commit(
          a.id,
          [{ type: 'note', id: 'a:3', room: 'test:c', note: { kind: 'cancel-requests', ids: [4] } }],
          EMPTY_STATE,
        );
        await reopen();
        expect(await store.rooms.notes()).toEqual([
          { id: 'a:1', room: 'test:b', note: { kind: 'request-opened', id: 1, target: 'test:a' } },
          { id: 'a:2', room: 'test:b', note: settled },
          { id: 'a:3', room: 'test:c', note: { kind: 'cancel-requests', ids: [4] } },
        ]);
        await store.rooms.commit(
          b.id,
          [
            { type: 'note-done', id: 'a:1' },
            { type: 'note-done', id: 'a:2' },
          ],
          EMPTY_STATE,
        );
        expect((await store.rooms.notes()).map((n) => n.id)).toEqual(['a:3']);
      });

      it('takes a note once: a second decision that takes it is a duplicate and stores nothing', async () => {
        const a = await store.rooms.open('test', 'a');
        const b = await store.rooms.open('test', 'b');
        const note: Note = { kind: 'cancel-requests', ids: [7] };
        await store.rooms.commit(a.id, [{ type: 'note', id: 'a:1', room: 'test:b', note }], EMPTY_STATE);
        const m1 = human(1, 'taken with the note', ['m1']);
        const taking = (m: Message) => [message(m), { type: 'note-done' as const, id: 'a:1' }];
        expect(await store.rooms.commit(b.id, taking(m1), stateAfter(EMPTY_STATE, m1))).toBe('done');
        const m2 = human(2, 'taken with it again', ['m2']);
        expect(await store.rooms.commit(b.id, taking(m2), stateAfter(stateAfter(EMPTY_STATE, m1), m2))).toBe(
          'duplicate',
        );
        expect(await store.rooms.commit(b.id, [{ type: 'note-done', id: 'a:1' }], EMPTY_STATE)).toBe('duplicate');
        await reopen();
        expect((await store.rooms.history(b.id, 10)).map((m) => m.content)).toEqual(['taken with the note']);
        expect(await store.rooms.notes()).toEqual([]);
      });
    });

    describe('transcripts and the reasons for decisions', () => {
      it("pages a room's transcript by row id, oldest first, with each message's platform id, seq and tool runs", async () => {
        const room = await store.rooms.open('web', 'general');
        let state = EMPTY_STATE;
        for (let i = 1; i <= 5; i++) {
          const m = human(i, `m${i}`, [`h${i}`]);
          state = stateAfter(state, m);
          await store.rooms.commit(room.id, [message(m)], state);
        }
        const runs = [{ tool: 'bash', input: 'ls', output: 'a.csv' }];
        const reply = agentMessage(6, 'done', ['p6a', 'p6b'], { toolRuns: runs });
        await store.rooms.commit(room.id, [message(reply)], stateAfter(state, reply));
        await reopen();
        const newest = await store.rooms.transcript(room.id, { limit: 3 });
        expect(newest.map((m) => [m.platformId, m.seq, m.text])).toEqual([
          ['h4', 4, 'm4'],
          ['h5', 5, 'm5'],
          ['p6a', 6, 'done'],
        ]);
        expect(newest[2]).toMatchObject({ author: 'code', kind: 'agent', toolRuns: runs, at: 1006 });
        const older = await store.rooms.transcript(room.id, { before: newest[0]?.id ?? 0, limit: 10 });
        expect(older.map((m) => m.text)).toEqual(['m1', 'm2', 'm3']);
        expect(await store.rooms.transcript(room.id, { before: older[0]?.id ?? 0, limit: 10 })).toEqual([]);
      });

      it('keeps the records of each decision with it, by the message they are about, and none of a duplicate', async () => {
        const room = await store.rooms.open('web', 'general');
        const first = human(1, '@code hi', ['h1']);
        const routed: Write = {
          type: 'decision',
          seq: 1,
          record: { kind: 'routed', seq: 1, author: 'alice', woken: ['code:addressed'] },
          at: 5,
        };
        await store.rooms.commit(room.id, [message(first), routed], stateAfter(EMPTY_STATE, first));
        const passed: Write = { type: 'decision', seq: 1, record: { kind: 'passed', agent: 'code', about: 1 }, at: 6 };
        const handBack: Write = { type: 'decision', seq: 2, record: { kind: 'hand-back', reason: '/pass' }, at: 7 };
        await store.rooms.commit(room.id, [passed, handBack], stateAfter(EMPTY_STATE, first));
        // A duplicate decision stores none of its records.
        const again: Write = { type: 'decision', seq: 1, record: { kind: 'passed', agent: 'data', about: 1 }, at: 8 };
        expect(await store.rooms.commit(room.id, [message(human(1, 'again', ['h1'])), again], EMPTY_STATE)).toBe(
          'duplicate',
        );
        await reopen();
        expect(await store.rooms.decisions(room.id, 1, 1)).toEqual([
          { seq: 1, record: { kind: 'routed', seq: 1, author: 'alice', woken: ['code:addressed'] }, at: 5 },
          { seq: 1, record: { kind: 'passed', agent: 'code', about: 1 }, at: 6 },
        ]);
        expect((await store.rooms.decisions(room.id, 1, 2)).map((d) => d.record.kind)).toEqual([
          'routed',
          'passed',
          'hand-back',
        ]);
        const other = await store.rooms.open('web', 'other');
        expect(await store.rooms.decisions(other.id, 0, 10)).toEqual([]);
      });
    });

    describe("the web room's people", () => {
      const ana = { name: 'Ana', operator: true };

      it('signs a person in once per code: unknown, used and expired codes open nothing', async () => {
        await store.people.invite(ana, 'code-1', 1000, 2000);
        expect(await store.people.invited('code-1', 1500)).toEqual(ana);
        expect(await store.people.invited('code-1', 2000)).toBeUndefined();
        expect(await store.people.redeem('nope', 'token-0', 1500, 9000)).toBeUndefined();
        expect(await store.people.redeem('code-1', 'token-1', 1500, 9000)).toEqual(ana);
        expect(await store.people.redeem('code-1', 'token-2', 1600, 9000)).toBeUndefined();
        expect(await store.people.invited('code-1', 1600)).toBeUndefined();
        await store.people.invite({ name: 'ben', operator: false }, 'code-2', 1000, 2000);
        expect(await store.people.redeem('code-2', 'token-3', 2000, 9000)).toBeUndefined();
        await reopen();
        expect(await store.people.session('token-1', 8000)).toEqual(ana);
        expect(await store.people.session('token-1', 9000)).toBeUndefined();
        expect(await store.people.session('token-2', 8000)).toBeUndefined();
      });

      it('lists people by name, whatever the case, and a new invite sets whether they are an operator', async () => {
        await store.people.invite({ name: 'ben', operator: false }, 'b1', 10, 100);
        await store.people.invite(ana, 'a1', 20, 100);
        await store.people.redeem('a1', 'ta', 30, 1000);
        await store.people.invite({ name: 'ANA', operator: false }, 'a2', 40, 100);
        expect(await store.people.list(50)).toEqual([
          { name: 'Ana', operator: false, createdAt: 20, sessions: 1, seenAt: 30 },
          { name: 'ben', operator: false, createdAt: 10, sessions: 0 },
        ]);
        expect(await store.people.session('ta', 60)).toEqual({ name: 'Ana', operator: false });
      });

      it('ends a session nobody used since `idleSince`: every use (at most one write a minute) keeps it open', async () => {
        await store.people.invite(ana, 'a1', 0, 1_000_000);
        await store.people.redeem('a1', 't1', 1000, 1_000_000);
        expect(await store.people.session('t1', 100_000, 1000)).toEqual(ana);
        expect(await store.people.session('t1', 200_000, 100_001)).toBeUndefined();
        await store.people.invite(ana, 'a2', 0, 1_000_000);
        await store.people.redeem('a2', 't2', 1000, 1_000_000);
        expect(await store.people.session('t2', 200_000, 150_000)).toBeUndefined();
        expect(await store.people.session('t2', 200_000)).toEqual(ana);
      });

      it('ends one session at sign-out, and every session and unused code of a person when revoked', async () => {
        await store.people.invite(ana, 'a1', 0, 100);
        await store.people.invite(ana, 'a2', 0, 100);
        await store.people.invite(ana, 'a3', 0, 100);
        await store.people.redeem('a1', 't1', 1, 1000);
        await store.people.redeem('a2', 't2', 1, 1000);
        await store.people.endSession('t1');
        expect(await store.people.session('t1', 2)).toBeUndefined();
        expect(await store.people.session('t2', 2)).toEqual(ana);
        expect(await store.people.revoke('ana')).toBe(1);
        expect(await store.people.session('t2', 2)).toBeUndefined();
        expect(await store.people.redeem('a3', 't3', 2, 1000)).toBeUndefined();
        expect((await store.people.list(3)).map((p) => [p.name, p.sessions])).toEqual([['Ana', 0]]);
      });

      it("keeps an operator's MCP tokens by id and digest, with the person as they are now, until revoked", async () => {
        expect(await store.people.addToken('ana', 'id-0', 'hash-0', 1)).toBe(false);
        expect(await store.people.token('id-0', 2)).toBeUndefined();
        await store.people.invite(ana, 'a1', 0, 100);
        expect(await store.people.addToken('ANA', 'id-1', 'hash-1', 10)).toBe(true);
        expect(await store.people.addToken('ana', 'id-2', 'hash-2', 10)).toBe(true);
        await reopen();
        expect(await store.people.token('id-1', 20)).toEqual({ secretHash: 'hash-1', person: ana });
        await store.people.invite({ name: 'ana', operator: false }, 'a2', 30, 100);
        expect(await store.people.token('id-2', 40)).toEqual({
          secretHash: 'hash-2',
          person: { name: 'Ana', operator: false },
        });
        expect(await store.people.revokeTokens('ana')).toBe(2);
        expect(await store.people.token('id-1', 50)).toBeUndefined();
        expect(await store.people.addToken('ana', 'id-3', 'hash-3', 60)).toBe(true);
        await store.people.revoke('Ana');
        expect(await store.people.token('id-3', 70)).toBeUndefined();
      });
    });

    describe('DM pairing', () => {
      const ask = (userId: string, code: string, now = 1000) => ({
        code,
        platform: 'slack',
        userId,
        name: `name-${userId}`,
        now,
        expiresAt: now + 3_600_000,
        maxPending: 2,
      });

      it('gives a person one code at a time, and at most a few wait on a platform', async () => {
        expect(await store.access.requestCode(ask('U1', 'AAAA-1111'))).toEqual({ code: 'AAAA-1111', fresh: true });
        expect(await store.access.requestCode(ask('U1', 'BBBB-2222'))).toEqual({ code: 'AAAA-1111', fresh: false });
        expect(await store.access.requestCode(ask('U2', 'CCCC-3333'))).toEqual({ code: 'CCCC-3333', fresh: true });
        expect(await store.access.requestCode(ask('U3', 'DDDD-4444'))).toBe('full');
        expect(await store.access.requestCode({ ...ask('U3', 'DDDD-4444'), platform: 'discord' })).toMatchObject({
          fresh: true,
        });
        // An hour later the codes have expired: room for new ones, and the old one is gone.
        expect(await store.access.requestCode(ask('U3', 'EEEE-5555', 3_700_000))).toMatchObject({ fresh: true });
        expect(await store.access.approve('AAAA-1111', 'op', 3_700_001)).toBeUndefined();
      });

      it('approves a code once, pairing its person, and revokes by id or name', async () => {
        await store.access.requestCode(ask('U1', 'AAAA-1111'));
        expect(await store.access.paired('slack', 'U1')).toBe(false);
        expect(await store.access.approve('AAAA-1111', 'op', 2000)).toEqual({
          platform: 'slack',
          userId: 'U1',
          name: 'name-U1',
          approvedBy: 'op',
          approvedAt: 2000,
        });
        expect(await store.access.approve('AAAA-1111', 'op', 2001)).toBeUndefined();
        await reopen();
        expect(await store.access.paired('slack', 'U1')).toBe(true);
        expect(await store.access.paired('discord', 'U1')).toBe(false);
        expect((await store.access.list(2002)).paired.map((p) => p.userId)).toEqual(['U1']);
        await store.access.requestCode(ask('U2', 'BBBB-2222'));
        expect((await store.access.list(2002)).pending.map((p) => p.code)).toEqual(['BBBB-2222']);
        expect(await store.access.revoke(undefined, 'NAME-u1')).toBe(1);
        expect(await store.access.paired('slack', 'U1')).toBe(false);
        expect(await store.access.revoke('slack', 'U2')).toBe(0);
        expect((await store.access.list(2003)).pending).toEqual([]);
      });
    });

    describe('tool journal', () => {
      it("keeps each ask's tool runs in order, by room and ask, from started (already named) to ended", async () => {
        const first = await store.tools.started('test:a', 3, 'bash', '{"command":"ls"}', 100, 'ls');
        const second = await store.tools.started('test:a', 3, 'write_file', '{"path":"x"}', 101, '{"path":"x"}');
        await store.tools.started('test:a', 4, 'bash', '{}', 102, '{}');
        await store.tools.started('test:b', 3, 'bash', '{}', 103, '{}');
        await store.tools.ended(first, { status: 'ok', input: 'ls', output: 'a.csv' });
        await reopen();
        expect(await store.tools.runs('test:a', 3)).toEqual([
          { id: first, tool: 'bash', args: '{"command":"ls"}', status: 'ok', input: 'ls', output: 'a.csv' },
          {
            id: second,
            tool: 'write_file',
            args: '{"path":"x"}',
            status: 'started',
            input: '{"path":"x"}',
            output: null,
          },
        ]);
        expect(await store.tools.runs('test:a', 5)).toEqual([]);
        expect((await store.tools.runs('test:b', 3)).map((r) => r.tool)).toEqual(['bash']);
      });
    });

    describe('spending limits', () => {
      const scopes = (amount: number, limits: { bridge?: number; agent?: number } = {}) => [
        { scope: 'bridge', limit: limits.bridge ?? null, amount },
        { scope: 'room:test:a', limit: null, amount },
        { scope: 'agent:ana', limit: limits.agent ?? null, amount },
      ];

      it('holds an amount in every scope at once, or in none when one limit would be crossed', async () => {
        expect(
          await store.spend.reserve({ id: 'h1', day: '2026-11-26', scopes: scopes(600, { bridge: 1000 }), at: 1 }),
        ).toEqual({
          ok: true,
        });
        expect(
          await store.spend.reserve({ id: 'h2', day: '2026-11-26', scopes: scopes(500, { bridge: 1000 }), at: 2 }),
        ).toEqual({
          ok: false,
          scope: 'bridge',
          used: 600,
          limit: 1000,
        });
        expect(await store.spend.day('2026-11-26')).toEqual([
          { scope: 'agent:ana', spent: 0, reserved: 600 },
          { scope: 'bridge', spent: 0, reserved: 600 },
          { scope: 'room:test:a', spent: 0, reserved: 600 },
        ]);
        // Another day starts from nothing.
        expect(
          await store.spend.reserve({ id: 'h3', day: '2026-11-27', scopes: scopes(900, { bridge: 1000 }), at: 3 }),
        ).toEqual({
          ok: true,
        });
      });

      it('settles a hold with what the call cost, or spends it whole when the cost is not known, once', async () => {
        await store.spend.reserve({ id: 'h1', day: 'd', scopes: scopes(600), at: 1 });
        await store.spend.reserve({ id: 'h2', day: 'd', scopes: scopes(300), at: 2 });
        await store.spend.settle(
          'h1',
          new Map([
            ['bridge', 250],
            ['room:test:a', 250],
            ['agent:ana', 250],
          ]),
        );
        await store.spend.settle('h1', null); // settled already: nothing changes
        await store.spend.settle('h2', null);
        expect(await store.spend.day('d')).toEqual([
          { scope: 'agent:ana', spent: 550, reserved: 0 },
          { scope: 'bridge', spent: 550, reserved: 0 },
          { scope: 'room:test:a', spent: 550, reserved: 0 },
        ]);
      });

      it('spends in full the holds a stopped bridge left, and keeps the spend across a restart', async () => {
        await store.spend.reserve({ id: 'h1', day: 'd', scopes: scopes(400, { agent: 1000 }), at: 1 });
        store = await reopen();
        expect(await store.spend.settleAbandoned()).toBe(1);
        expect(await store.spend.settleAbandoned()).toBe(0);
        expect((await store.spend.day('d')).find((row) => row.scope === 'agent:ana')).toEqual({
          scope: 'agent:ana',
          spent: 400,
          reserved: 0,
        });
        expect(
          (await store.spend.reserve({ id: 'h2', day: 'd', scopes: scopes(700, { agent: 1000 }), at: 2 })).ok,
        ).toBe(false);
      });

      it("spends in full the holds of replicas not live, and a replica's own only when asked (its previous run)", async () => {
        const limits = scopes(100, { agent: 1000 });
        await store.spend.reserve({ id: 'of-a', day: 'd', scopes: limits, at: 1, replica: 'a' });
        await store.spend.reserve({ id: 'of-b', day: 'd', scopes: limits, at: 2, replica: 'b' });
        await store.spend.reserve({ id: 'of-nobody', day: 'd', scopes: limits, at: 3 });
        // b's periodic look: a was never seen (no row in the registry), the hold without a replica is nobody's.
        expect(await store.spend.settleAbandoned({ replica: 'b', liveMs: 60_000, own: false })).toBe(2);
        expect((await store.spend.day('d')).find((row) => row.scope === 'agent:ana')).toEqual({
          scope: 'agent:ana',
          spent: 200,
          reserved: 100,
        });
        // b starting again: its previous run's hold is spent too.
        expect(await store.spend.settleAbandoned({ replica: 'b', liveMs: 60_000, own: true })).toBe(1);
        expect(await store.spend.settleAbandoned({ replica: 'b', liveMs: 60_000, own: true })).toBe(0);
      });

      it("keeps operators' limits (a number, or none) until they are cleared", async () => {
        await store.spend.setLimit('room:test:a', 5_000);
        await store.spend.setLimit('agent:ana', null);
        await store.spend.setLimit('room:test:a', 7_000);
        await reopen();
        expect([...(await store.spend.limits())]).toEqual([
          ['agent:ana', null],
          ['room:test:a', 7_000],
        ]);
        await store.spend.clearLimit('agent:ana');
        expect([...(await store.spend.limits())]).toEqual([['room:test:a', 7_000]]);
      });
    });

    describe('the token economy', () => {
      it('sums token usage per agent and room, cached never above input', async () => {
        await store.usage.add('ana', 'test:a', { input: 1000, cached: 800, output: 50 });
        await store.usage.add('ana', 'test:a', { input: 500, cached: 900, output: 5 });
        await store.usage.add('ana', 'test:b', { input: 10, cached: 0, output: 1 });
        await store.usage.add('ben', 'test:b', { input: 7, cached: 0, output: 2 });
        await reopen();
        expect(await store.usage.inRoom('test:a')).toEqual([
          { agent: 'ana', calls: 2, input: 1500, cached: 1300, output: 55 },
        ]);
        expect(await store.usage.total()).toEqual([
          { agent: 'ana', calls: 3, input: 1510, cached: 1300, output: 56 },
          { agent: 'ben', calls: 1, input: 7, cached: 0, output: 2 },
        ]);
      });

      it("keeps each agent's knowledge by key, whatever the agent name's case", async () => {
        const room = { room: 'test:room', audience: null };
        await store.knowledge.set('Ana', room, 'launch', 'Friday', 1);
        await store.knowledge.set('ana', room, 'room', 'B', 2);
        await store.knowledge.set('ANA', room, 'launch', 'Monday', 3);
        await store.knowledge.set('ben', room, 'x', 'y', 4);
        await reopen();
        expect(await store.knowledge.list('ana', room)).toEqual([
          { key: 'launch', value: 'Monday' },
          { key: 'room', value: 'B' },
        ]);
        expect(await store.knowledge.has('Ana', room, 'room')).toBe(true);
        expect(await store.knowledge.has('ana', room, 'x')).toBe(false);
        expect(await store.knowledge.count('ana', 'test:room')).toBe(2);
        expect(await store.knowledge.delete('ana', room, 'room')).toBe(true);
        expect(await store.knowledge.delete('ana', room, 'room')).toBe(false);
        expect(await store.knowledge.count('ana', 'test:room')).toBe(1);
      });

      it('lists, finds and forgets knowledge only where the place it was learnt in may be shown', async () => {
        const room = { room: 'test:room', audience: null };
        const dm = { room: 'test:dm-bob', audience: null };
        const bobs = { room: 'test:room', audience: ['Bob', 'code'] };
        const alices = { room: 'test:room', audience: ['alice', 'code'] };
        await store.knowledge.set('code', room, 'launch', 'Friday', 1);
        await store.knowledge.set('code', dm, 'pin', 'dm-secret', 2);
        await store.knowledge.set('code', bobs, 'pin', 'exchange-secret', 3);
        await reopen();
        expect(await store.knowledge.list('code', room)).toEqual([{ key: 'launch', value: 'Friday' }]);
        expect(await store.knowledge.list('code', alices)).toEqual([{ key: 'launch', value: 'Friday' }]);
        expect(await store.knowledge.list('code', dm)).toEqual([{ key: 'pin', value: 'dm-secret' }]);
        expect(await store.knowledge.list('code', { room: 'test:room', audience: ['code', 'bob'] })).toEqual([
          { key: 'launch', value: 'Friday' },
          { key: 'pin', value: 'exchange-secret' },
        ]);
        expect(await store.knowledge.has('code', room, 'pin')).toBe(false);
        expect(await store.knowledge.has('code', { room: 'test:room', audience: ['code', 'BOB'] }, 'pin')).toBe(true);
        expect(await store.knowledge.count('code', 'test:room')).toBe(2);
        // Forgetting where a key is not shown forgets nothing; where it is shown, every copy shown there goes.
        expect(await store.knowledge.delete('code', alices, 'pin')).toBe(false);
        expect(await store.knowledge.delete('code', bobs, 'pin')).toBe(true);
        expect(await store.knowledge.list('code', dm)).toEqual([{ key: 'pin', value: 'dm-secret' }]);
      });

      it("lists an agent's knowledge in the byte order of its keys, capitals first, whatever the database's collation", async () => {
        const room = { room: 'test:room', audience: null };
        for (const key of ['b', 'B', 'a', 'A', 'a-b', 'a_b', 'ab']) await store.knowledge.set('ana', room, key, key, 1);
        expect((await store.knowledge.list('ana', room)).map((row) => row.key)).toEqual([
          'A',
          'B',
          'a',
          'a-b',
          'a_b',
          'ab',
          'b',
        ]);
      });

      it("keeps each agent's newest 200 actions per room, newest first, shown only where their place may be", async () => {
        const room = { room: 'test:room', audience: null };
        const other = { room: 'test:other', audience: null };
        for (let i = 0; i < 250; i++) await store.actions.add('Code', room, `bash: step ${i}`, i);
        await store.actions.add('code', other, 'bash: elsewhere', 500);
        await store.actions.add('data', other, 'remember: x', 999);
        const kept = await store.actions.recent('code', room, 1000);
        expect(kept).toHaveLength(200);
        expect(kept[0]).toEqual({ at: 249, room: 'test:room', text: 'bash: step 249' });
        expect(kept.at(-1)?.text).toBe('bash: step 50');
        expect(await store.actions.recent('code', room, 2)).toHaveLength(2);
        expect(await store.actions.recent('code', other)).toEqual([
          { at: 500, room: 'test:other', text: 'bash: elsewhere' },
        ]);
        expect(await store.actions.recent('data', other)).toEqual([
          { at: 999, room: 'test:other', text: 'remember: x' },
        ]);
        await store.actions.add('code', { room: 'test:other', audience: ['bob', 'code'] }, 'bash: private', 600);
        expect((await store.actions.recent('code', other)).map((a) => a.text)).toEqual(['bash: elsewhere']);
        expect(
          (await store.actions.recent('code', { room: 'test:other', audience: ['Code', 'Bob'] })).map((a) => a.text),
        ).toEqual(['bash: private', 'bash: elsewhere']);
      });

      it('keeps message embeddings by message and model', async () => {
        const room = await store.rooms.open('test', 'room');
        const a = human(1, 'a', ['a']);
        const b = human(2, 'b', ['b']);
        await store.rooms.commit(room.id, [message(a), message(b)], stateAfter(EMPTY_STATE, a, b));
        const [ma, mb] = await store.rooms.history(room.id, 10);
        if (!ma || !mb) throw new Error('messages not stored');
        await store.embeddings.put([{ id: ma.id, vector: Float32Array.from([1, 0.5, -2]) }], 'small');
        await store.embeddings.put([{ id: mb.id, vector: Float32Array.from([0, 1]) }], 'small');
        await store.embeddings.put([{ id: mb.id, vector: Float32Array.from([3, 4]) }], 'small');
        await reopen();
        const found = await store.embeddings.get([ma.id, mb.id, 999], 'small');
        expect([...found.keys()]).toEqual([ma.id, mb.id]);
        expect([...(found.get(ma.id) ?? [])]).toEqual([1, 0.5, -2]);
        expect([...(found.get(mb.id) ?? [])]).toEqual([3, 4]);
        expect((await store.embeddings.get([ma.id], 'large')).size).toBe(0);
      });

      it('lists the human and agent messages still without a vector for a model, oldest first, after a cursor', async () => {
        const room = await store.rooms.open('test', 'room');
        const other = await store.rooms.open('test', 'other');
        const a = human(1, 'a', ['a']);
        const note = human(2, 'the bridge says', ['n'], { kind: 'system', author: 'system' });
        const b = agentMessage(3, 'b', ['b']);
        await store.rooms.commit(room.id, [message(a), message(note), message(b)], stateAfter(EMPTY_STATE, a, note, b));
        const c = human(1, 'c', ['c']);
        await store.rooms.commit(other.id, [message(c)], stateAfter(EMPTY_STATE, c));
        const pending = await store.embeddings.pending('small', 0, 10);
        expect(pending.map((p) => [p.room, p.text])).toEqual([
          ['test:room', 'a'],
          ['test:room', 'b'],
          ['test:other', 'c'],
        ]);
        const [pa, pb, pc] = pending;
        if (!pa || !pb || !pc) throw new Error('not pending');
        expect(await store.embeddings.pending('small', pa.id, 1)).toEqual([pb]);
        await store.embeddings.put([{ id: pb.id, vector: Float32Array.from([1, 2]) }], 'small');
        await store.embeddings.put([{ id: pc.id, vector: Float32Array.from([1, 2]) }], 'large');
        expect((await store.embeddings.pending('small', 0, 10)).map((p) => p.text)).toEqual(['a', 'c']);
        // A vector of another model counts as none: it is embedded again with this one.
        expect((await store.embeddings.pending('large', 0, 10)).map((p) => p.text)).toEqual(['a', 'b']);
      });

      it("searches one room's vectors: public ones and the audiences asked for, older than the window, most alike first", async () => {
        const dims = 512;
        /** A unit-ish vector along axis `axis`, leaning `lean` toward axis 1. */
        const along = (axis: number, lean = 0) => {
          const v = new Float32Array(dims).map((_, i) => ((i * 7919 + axis * 104729) % 13) / 100 - 0.06);
          v[axis] = 10;
          v[1] = (v[1] ?? 0) + lean;
          return v;
        };
        const room = await store.rooms.open('test', 'room');
        const other = await store.rooms.open('test', 'other');
        const texts = ['near', 'nearer', 'private to code', 'private to data', 'far', 'newest'];
        const msgs = texts.map((text, i) =>
          human(
            i + 1,
            text,
            [`m${i}`],
            i === 2 ? { audience: ['alice', 'code'] } : i === 3 ? { audience: ['data'] } : {},
          ),
        );
        await store.rooms.commit(room.id, msgs.map(message), stateAfter(EMPTY_STATE, ...msgs));
        const elsewhere = human(1, 'nearest, in another room', ['x']);
        await store.rooms.commit(other.id, [message(elsewhere)], stateAfter(EMPTY_STATE, elsewhere));
        const stored = await store.rooms.history(room.id, 10);
        const [otherStored] = await store.rooms.history(other.id, 1);
        const id = (text: string) => stored.find((m) => m.content === text)?.id ?? -1;
        const query = along(0, 9);
        await store.embeddings.put(
          [
            { id: id('near'), vector: along(0, 3) },
            { id: id('nearer'), vector: along(0, 8) },
            { id: id('private to code'), vector: along(0, 9) },
            { id: id('private to data'), vector: along(0, 9) },
            { id: id('far'), vector: along(5) },
            { id: id('newest'), vector: along(0, 9) },
            { id: otherStored?.id ?? -1, vector: along(0, 9) },
          ],
          'small',
        );
        const search = async (audiences: string[][], limit = 10) =>
          (
            await store.embeddings.search({
              roomId: room.id,
              model: 'small',
              vector: query,
              audiences,
              before: id('newest'),
              limit,
            })
          ).map((found) => found.message.content);
        expect(await store.embeddings.audiences(room.id, 'small')).toEqual(
          expect.arrayContaining([['alice', 'code'], ['data']]),
        );
        expect(await store.embeddings.audiences(room.id, 'large')).toEqual([]);
        expect(await search([])).toEqual(['nearer', 'near', 'far']);
        expect(await search([['alice', 'code']])).toEqual(['private to code', 'nearer', 'near', 'far']);
        expect(await search([['alice', 'code']], 2)).toEqual(['private to code', 'nearer']);
        const found = await store.embeddings.search({
          roomId: room.id,
          model: 'small',
          vector: query,
          audiences: [],
          before: id('newest'),
          limit: 1,
        });
        expect(found[0]?.score).toBeGreaterThan(0.9);
        expect(found[0]?.message).toMatchObject({ id: id('nearer'), author: 'alice', kind: 'human' });
        await reopen();
        expect(await search([['data']])).toEqual(['private to data', 'nearer', 'near', 'far']);
        expect(
          await store.embeddings.search({
            roomId: room.id,
            model: 'large',
            vector: query,
            audiences: [],
            before: 1e9,
            limit: 5,
          }),
        ).toEqual([]);
      });

      it("forgets a room's vectors with its messages, and stores none for a message no longer there", async () => {
        const room = await store.rooms.open('test', 'room');
        const a = human(1, 'a', ['a']);
        await store.rooms.commit(room.id, [message(a)], stateAfter(EMPTY_STATE, a));
        const [stored] = await store.rooms.history(room.id, 1);
        if (!stored) throw new Error('not stored');
        const vector = new Float32Array(512).fill(1);
        await store.embeddings.put([{ id: stored.id, vector }], 'small');
        const query = { roomId: room.id, model: 'small', vector, audiences: [], before: 1e9, limit: 5 };
        expect(await store.embeddings.search(query)).toHaveLength(1);
        await store.rooms.clear(room.id);
        expect(await store.embeddings.search(query)).toEqual([]);
        await store.embeddings.put([{ id: stored.id, vector }], 'small');
        expect(await store.embeddings.get([stored.id], 'small')).toEqual(new Map());
        expect(await store.embeddings.pending('small', 0, 10)).toEqual([]);
      });

      it("keeps one summary per room and block across a restart, and reads a block's messages of every audience", async () => {
        const room = await store.rooms.open('test', 'room');
        const other = await store.rooms.open('test', 'other');
        const a = human(1, 'a', ['a']);
        const b = human(2, 'b', ['b'], { audience: ['alice', 'data'] });
        await store.rooms.commit(room.id, [message(a), message(b)], stateAfter(EMPTY_STATE, a, b));
        const c = human(1, 'c', ['c']);
        await store.rooms.commit(other.id, [message(c)], stateAfter(EMPTY_STATE, c));
        const ids = (await store.rooms.history(room.id, 10)).map((m) => m.id);
        const block = await store.summaries.block('test:room', 0, 1_000_000);
        expect(block.map((m) => [m.id, m.content, m.audience ?? null])).toEqual([
          [ids[0], 'a', null],
          [ids[1], 'b', ['alice', 'data']],
        ]);
        const summary = { firstId: 0, width: 10, messages: 2, model: 'small', summary: 'a and b' };
        expect(await store.summaries.put('test:room', summary, 1)).toBe(true);
        expect(await store.summaries.put('test:room', { ...summary, summary: 'again' }, 2)).toBe(false);
        expect(await store.summaries.put('test:room', { ...summary, firstId: 10, summary: null }, 3)).toBe(true);
        await reopen();
        expect(await store.summaries.before('test:room', 10, 20)).toEqual([
          summary,
          { ...summary, firstId: 10, summary: null },
        ]);
        // Only blocks that end at or before the given id, of that width and room.
        expect(await store.summaries.before('test:room', 10, 19)).toEqual([summary]);
        expect(await store.summaries.before('test:room', 20, 40)).toEqual([]);
        expect(await store.summaries.before('test:other', 10, 40)).toEqual([]);
      });

      it('keeps private chat requests: pending until answered or expired, the sender told once', async () => {
        const asked = await store.chats.create('code', 'data', 'compare notes', 1000, 60_000);
        expect(asked).toEqual({
          id: asked.id,
          from: 'code',
          to: 'data',
          reason: 'compare notes',
          status: 'pending',
          createdAt: 1000,
          expiresAt: 61_000,
          senderTold: false,
        });
        const late = await store.chats.create('data', 'reviewer', 'look', 2000, 1000);
        await store.chats.expire(3000);
        await store.chats.setStatus(asked.id, 'accepted');
        await store.chats.markTold(late.id);
        await reopen();
        expect((await store.chats.get(asked.id))?.status).toBe('accepted');
        expect(await store.chats.get(late.id)).toMatchObject({ status: 'expired', senderTold: true });
        expect(await store.chats.get(999)).toBeUndefined();
        expect((await store.chats.involving('DATA')).map((c) => c.id)).toEqual([asked.id, late.id]);
        expect((await store.chats.involving('reviewer')).map((c) => c.id)).toEqual([late.id]);
      });

      it("keeps a pair room's chat requests as its decisions write them, numbered on from those stored", async () => {
        const room = await store.rooms.open('private', 'code+data');
        const earlier = await store.chats.create('code', 'data', 'earlier', 1000, 60_000);
        const id = await store.chats.nextId();
        expect(id).toBeGreaterThan(earlier.id);
        const made: ChatRequest = {
          id,
          from: 'data',
          to: 'code',
          reason: 'numbers',
          status: 'pending',
          createdAt: 2000,
          expiresAt: 62_000,
          senderTold: false,
        };
        const state = { ...EMPTY_STATE, chats: [made] };
        expect(await store.rooms.commit(room.id, [{ type: 'chat-request', request: made }], state)).toBe('done');
        // Written again as the room changed it: only its status and whether its sender was told change.
        const told = { ...made, reason: 'other', status: 'declined', senderTold: true } as const;
        await store.rooms.commit(room.id, [{ type: 'chat-request', request: told }], { ...state, chats: [told] });
        await reopen();
        expect(await store.chats.get(id)).toEqual({ ...made, status: 'declined', senderTold: true });
        expect((await store.rooms.open('private', 'code+data')).state?.chats).toEqual([told]);
        expect((await store.chats.involving('code')).map((c) => c.id)).toEqual([earlier.id, id]);
        expect((await store.chats.create('code', 'data', 'later', 3000, 1000)).id).toBeGreaterThan(id);
      });
    });

    it('answers a ping while it can be written', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
