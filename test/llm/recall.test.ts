import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecall } from '../../src/llm/recall.js';
import type { RoomMessage } from '../../src/room/types.js';
import { dayOf } from '../../src/spend/day.js';
import { type Harness, situationOf, startHarness, turnNoteOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const FILLER = ['lunch was good', 'the printer is jammed again', 'who has the meeting room', 'coffee machine fixed'];
const OLDER = '>>> OLDER MESSAGES THAT MAY BE RELEVANT <<<';

async function chatter(harness: Harness, count: number, channel = 'room') {
  for (let i = 0; i < count; i++) {
    await harness.adapter.say(`${FILLER[i % FILLER.length]} (${i})`, { channel });
  }
  await harness.bridge.idle();
}

/** The vectors stored for a room's messages. */
async function vectorsIn(harness: Harness, model: string, channel = 'room'): Promise<number> {
  const room = await harness.store.rooms.open('test', channel);
  const ids = (await harness.store.rooms.history(room.id, 10_000)).map((m) => m.id);
  return (await harness.store.embeddings.get(ids, model)).size;
}

const requestsOf = (harness: Harness, agent: string) =>
  harness.llm.requests.filter((r) => String(r.messages[0]?.content).includes(`You are @${agent}`));

describe('recall over the whole room (embeddings)', () => {
  it('recalls a fact from the first message of a 200-message room', async () => {
    h = await startHarness({
      agents: [{ name: 'ana', activation: 'mention' }],
      env: { EMBEDDINGS_MODEL: 'text-embedding-3-small', EMBEDDINGS_BATCH: '16' },
    });
    h.llm.respond(() => ({ content: 'ok' }));
    await h.adapter.say('The ocean project launch code is PURPLE-42, keep it safe.');
    await chatter(h, 198);
    await h.bridge.embedded();
    expect(await vectorsIn(h, 'text-embedding-3-small')).toBe(199);
    const question = '@ana what was the ocean project launch code?';
    await h.adapter.say(question);
    await h.bridge.idle();

    const request = h.llm.requests.at(-1);
    if (!request) throw new Error('no request');
    const note = turnNoteOf(request);
    expect(note).toContain(`${OLDER}\n[@user]: The ocean project launch code is PURPLE-42`);
    // Recalled, not in the history part of the request; after the history and before the situation.
    expect(request.messages.slice(0, -1).some((m) => String(m.content).includes('PURPLE-42'))).toBe(false);
    expect(note.indexOf(OLDER)).toBeLessThan(note.indexOf('>>> SITUATION <<<'));
    expect(situationOf(request)).toContain('@user asked for your action');
    // Embedded in the background, in batches of EMBEDDINGS_BATCH, with the model the bridge was given.
    expect(h.llm.embeddingRequests.every((r) => r.model === 'text-embedding-3-small')).toBe(true);
    expect(Math.max(...h.llm.embeddingRequests.map((r) => r.input.length))).toBe(16);
    // Each message once (the question may be embedded by its turn while the background takes it too).
    await h.bridge.embedded();
    const inputs = h.llm.embeddingRequests.flatMap((r) => r.input).filter((text) => text !== question);
    expect(inputs.length).toBe(new Set(inputs).size);
    expect(await vectorsIn(h, 'text-embedding-3-small')).toBe(201);
  });

  it('never recalls a message the agent may not see: a private exchange it is not in, a DM to another agent', async () => {
    h = await startHarness({
      agents: [
        { name: 'ana', activation: 'mention' },
        { name: 'ben', activation: 'mention' },
      ],
      env: { EMBEDDINGS_MODEL: 'emb', HISTORY_LIMIT: '4', PRIVACY: 'mentions' },
    });
    h.llm.respond(() => ({ content: 'noted' }));
    await h.adapter.say('@ben the ocean project launch code is PURPLE-42');
    await h.adapter.say('the harbour project launch code is GREEN-7, for ben only', {
      direct: 'ben',
      channel: 'dm-ben',
    });
    await h.bridge.idle();
    await chatter(h, 80);
    await h.bridge.embedded();
    await h.adapter.say('@ana what is the ocean project launch code? and the harbour project launch code?');
    await h.bridge.idle();
    const ana = requestsOf(h, 'ana');
    expect(ana.length).toBeGreaterThan(0);
    for (const request of ana) {
      expect(JSON.stringify(request.messages)).not.toContain('PURPLE-42');
      expect(JSON.stringify(request.messages)).not.toContain('GREEN-7');
    }
    // The agent in the exchange has it recalled: the search did reach it.
    await h.adapter.say('@ben what is the ocean project launch code?');
    await h.bridge.idle();
    expect(turnNoteOf(requestsOf(h, 'ben').at(-1) ?? { messages: [] })).toContain('PURPLE-42');
  });

  it('embeds what was stored while the endpoint was down once it answers again, and after a restart', async () => {
    h = await startHarness({
      agents: [{ name: 'ana', activation: 'mention' }],
      env: { EMBEDDINGS_MODEL: 'emb' },
    });
    h.llm.failEmbeddings(503);
    await chatter(h, 10);
    await until(() => (h?.llm.embeddingRequests.length ?? 0) > 0);
    await h.bridge.embedded();
    expect(await vectorsIn(h, 'emb')).toBe(0);
    h.llm.failEmbeddings(undefined);
    await until(async () => (await vectorsIn(h as Harness, 'emb')) === 10);

    h.llm.failEmbeddings(503);
    await chatter(h, 5);
    await h.bridge.stop();
    h.llm.failEmbeddings(undefined);
    await h.restart();
    await until(async () => (await vectorsIn(h as Harness, 'emb')) === 15);
  });

  it('with a failing endpoint the turn goes on without retrieval', async () => {
    h = await startHarness({
      agents: [{ name: 'ana', activation: 'mention' }],
      env: { EMBEDDINGS_MODEL: 'emb', HISTORY_LIMIT: '4' },
    });
    h.llm.failEmbeddings(500);
    h.llm.respond(() => ({ content: 'answered anyway' }));
    await chatter(h, 8);
    await h.adapter.say('@ana what about the printer?');
    await h.bridge.idle();
    expect(h.adapter.posts.at(-1)?.text).toBe('answered anyway');
    expect(turnNoteOf(h.llm.requests.at(-1) ?? { messages: [] })).not.toContain(OLDER);
    expect(h.llm.embeddingRequests.length).toBeGreaterThan(0);
  });

  it("counts background embeddings against the room's spending, and stops them at its limit", async () => {
    const price = { input: 1, cached: 0.5, output: 2 };
    h = await startHarness({
      agents: [{ name: 'ana', activation: 'mention', price }],
      env: { EMBEDDINGS_MODEL: 'emb', EMBEDDINGS_PRICE: '0.02' },
    });
    await chatter(h, 6);
    await h.bridge.embedded();
    expect(await vectorsIn(h, 'emb')).toBe(6);
    const rows = await h.store.spend.day(dayOf(Date.now(), 'UTC'));
    expect(rows.find((r) => r.scope === 'room:test:room')?.spent).toBeGreaterThan(0);
    expect(rows.find((r) => r.scope === 'bridge')?.spent).toBeGreaterThan(0);

    // A room whose limit is spent gets no more embeddings calls (and its turn is told so, not failed by them).
    await h.store.spend.setLimit('room:test:busy', 1);
    const before = h.llm.embeddingRequests.length;
    await chatter(h, 4, 'busy');
    await h.bridge.embedded();
    expect(await vectorsIn(h, 'emb', 'busy')).toBe(0);
    expect(h.llm.embeddingRequests.length).toBe(before);
  });
});

describe('recall', () => {
  const message = (id: number, content: string, audience?: string[]): RoomMessage => ({
    id,
    author: 'user',
    authorId: 'u',
    kind: 'human',
    content,
    mentions: [],
    toolRuns: [],
    at: id,
    ...(audience ? { audience } : {}),
  });

  it('logs a failing endpoint once, not on every turn, and again after it recovered and failed anew', async () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    let fail = true;
    const recall = createRecall({
      embedder: {
        model: 'emb',
        embed: async (texts) => {
          if (fail) throw new Error('503 overloaded');
          return texts.map(() => Float32Array.from([1, 0]));
        },
      },
      vectors: {
        get: async () => new Map(),
        put: async () => {},
        audiences: async () => [],
        search: async () => [{ message: message(1, 'a'), score: 0.9 }],
      },
      roomId: 1,
      viewers: ['ana'],
      log,
    });
    for (let i = 0; i < 3; i++) expect(await recall(message(3, 'c'), 3)).toEqual([]);
    expect(lines.filter((l) => l.includes('embeddings failed'))).toHaveLength(1);
    fail = false;
    expect(await recall(message(3, 'c'), 3)).toHaveLength(1);
    fail = true;
    await recall(message(3, 'c'), 3);
    expect(lines.filter((l) => l.includes('embeddings failed'))).toHaveLength(2);
  });

  it('asks the store for the audiences every viewer may see, and keeps only close enough messages they may all see', async () => {
    let asked: ReadonlyArray<readonly string[]> = [];
    const recall = createRecall({
      embedder: { model: 'emb', embed: async () => [Float32Array.from([1, 0])] },
      vectors: {
        get: async () => new Map(),
        put: async () => {},
        audiences: async () => [['ana', 'ben'], ['ana'], ['ben', 'cy']],
        search: async (query) => {
          asked = query.audiences;
          return [
            { message: message(1, 'close'), score: 0.9 },
            { message: message(2, 'private to cy', ['cy']), score: 0.8 },
            { message: message(4, 'far'), score: 0.1 },
          ];
        },
      },
      roomId: 1,
      viewers: ['Ana', 'ben'],
      log: pino({ level: 'silent' }),
    });
    expect((await recall(message(9, 'q'), 5)).map((m) => m.content)).toEqual(['close']);
    expect(asked).toEqual([['ana', 'ben']]);
  });
});
