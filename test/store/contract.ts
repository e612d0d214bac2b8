/**
 * The store contract: what every implementation of the store port does, as one suite. Each implementation calls
 * `storeContract` once with a way to make an empty database (SQLite: a file in a temporary folder).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { RequestRow, StoredMessage, Write } from '../../src/room/effects.js';
import type { Incoming, Note, ToolRun } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';
import type { StorePort } from '../../src/store/index.js';

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
    });

    describe('tool journal', () => {
      it("keeps each ask's tool runs in order, by room and ask, from started to ended", async () => {
        const first = await store.tools.started('test:a', 3, 'bash', '{"command":"ls"}', 100);
        const second = await store.tools.started('test:a', 3, 'write_file', '{"path":"x"}', 101);
        await store.tools.started('test:a', 4, 'bash', '{}', 102);
        await store.tools.started('test:b', 3, 'bash', '{}', 103);
        await store.tools.ended(first, { status: 'ok', input: 'ls', output: 'a.csv' });
        await reopen();
        expect(await store.tools.runs('test:a', 3)).toEqual([
          { id: first, tool: 'bash', args: '{"command":"ls"}', status: 'ok', input: 'ls', output: 'a.csv' },
          { id: second, tool: 'write_file', args: '{"path":"x"}', status: 'started', input: null, output: null },
        ]);
        expect(await store.tools.runs('test:a', 5)).toEqual([]);
        expect((await store.tools.runs('test:b', 3)).map((r) => r.tool)).toEqual(['bash']);
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
        await store.knowledge.set('Ana', 'launch', 'Friday', 1);
        await store.knowledge.set('ana', 'room', 'B', 2);
        await store.knowledge.set('ANA', 'launch', 'Monday', 3);
        await store.knowledge.set('ben', 'x', 'y', 4);
        await reopen();
        expect(await store.knowledge.list('ana')).toEqual([
          { key: 'launch', value: 'Monday' },
          { key: 'room', value: 'B' },
        ]);
        expect(await store.knowledge.has('Ana', 'room')).toBe(true);
        expect(await store.knowledge.has('ana', 'x')).toBe(false);
        expect(await store.knowledge.count('ana')).toBe(2);
        expect(await store.knowledge.delete('ana', 'room')).toBe(true);
        expect(await store.knowledge.delete('ana', 'room')).toBe(false);
        expect(await store.knowledge.count('ana')).toBe(1);
      });

      it("lists an agent's knowledge in the byte order of its keys, capitals first, whatever the database's collation", async () => {
        for (const key of ['b', 'B', 'a', 'A', 'a-b', 'a_b', 'ab']) await store.knowledge.set('ana', key, key, 1);
        expect((await store.knowledge.list('ana')).map((row) => row.key)).toEqual([
          'A',
          'B',
          'a',
          'a-b',
          'a_b',
          'ab',
          'b',
        ]);
      });

      it("keeps each agent's newest 200 actions, newest first", async () => {
        for (let i = 0; i < 250; i++) await store.actions.add('Code', 'test:room', `bash: step ${i}`, i);
        await store.actions.add('data', 'test:other', 'remember: x', 999);
        const kept = await store.actions.recent('code', 1000);
        expect(kept).toHaveLength(200);
        expect(kept[0]).toEqual({ at: 249, room: 'test:room', text: 'bash: step 249' });
        expect(kept.at(-1)?.text).toBe('bash: step 50');
        expect(await store.actions.recent('code', 2)).toHaveLength(2);
        expect(await store.actions.recent('data')).toEqual([{ at: 999, room: 'test:other', text: 'remember: x' }]);
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
    });

    it('answers a ping while it can be written', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
