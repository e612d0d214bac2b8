import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecall } from '../../src/llm/recall.js';
import type { RoomMessage } from '../../src/room/types.js';
import { type Harness, situationOf, startHarness, turnNoteOf } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const FILLER = ['lunch was good', 'the printer is jammed again', 'who has the meeting room', 'coffee machine fixed'];
const OLDER = '>>> OLDER MESSAGES THAT MAY BE RELEVANT <<<';

async function chatter(harness: Harness, count: number) {
  for (let i = 0; i < count; i++) {
    await harness.adapter.say(`${FILLER[i % FILLER.length]} (${i})`);
    await harness.bridge.idle();
  }
}

describe('retrieval of relevant older messages (embeddings)', () => {
  it('embeds messages in batches, stores them, and brings back a similar message that fell out of the window', async () => {
    h = await startHarness({
      agents: [{ name: 'ana', activation: 'mention' }],
      env: { EMBEDDINGS_MODEL: 'text-embedding-3-small', HISTORY_LIMIT: '6' },
    });
    h.llm.respond(() => ({ content: 'ok' }));
    await h.adapter.say('The ocean project launch code is PURPLE-42, keep it safe.');
    await chatter(h, 12);
    await h.adapter.say('@ana what was the ocean project launch code?');
    await h.bridge.idle();

    const request = h.llm.requests.at(-1);
    if (!request) throw new Error('no request');
    const note = turnNoteOf(request);
    expect(note).toContain(`${OLDER}\n[@user]: The ocean project launch code is PURPLE-42`);
    // Retrieved, not in the history part of the request.
    expect(request.messages.slice(0, -1).some((m) => String(m.content).includes('PURPLE-42'))).toBe(false);
    // Placed after the history and before the situation.
    expect(note.indexOf(OLDER)).toBeLessThan(note.indexOf('>>> SITUATION <<<'));
    expect(situationOf(request)).toContain('@user asked for your action');
    // One batched call for the older messages, with the model the bridge was given; vectors kept in SQLite.
    expect(h.llm.embeddingRequests[0]?.model).toBe('text-embedding-3-small');
    expect(h.llm.embeddingRequests[0]?.input.length).toBeGreaterThan(5);
    const room = await h.store.rooms.open('test', 'room');
    const ids = (await h.store.rooms.history(room.id, 100)).map((m) => m.id);
    const stored = [...(await h.store.embeddings.get(ids, 'text-embedding-3-small')).values()];
    expect(stored.length).toBeGreaterThan(5);
    expect(stored.every((vector) => vector.length === 64)).toBe(true);
  });

  it('never retrieves a message the agent may not see', async () => {
    h = await startHarness({
      agents: [
        { name: 'ana', activation: 'mention' },
        { name: 'ben', activation: 'mention' },
      ],
      env: { EMBEDDINGS_MODEL: 'emb', HISTORY_LIMIT: '4', PRIVACY: 'mentions' },
    });
    h.llm.respond(() => ({ content: 'noted' }));
    await h.adapter.say('@ben the ocean project launch code is PURPLE-42');
    await h.bridge.idle();
    await chatter(h, 10);
    await h.adapter.say('@ana what is the ocean project launch code?');
    await h.bridge.idle();
    const anaRequests = h.llm.requests.filter((r) => String(r.messages[0]?.content).includes('You are @ana'));
    expect(anaRequests.length).toBeGreaterThan(0);
    for (const request of anaRequests) expect(JSON.stringify(request.messages)).not.toContain('PURPLE-42');
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
});

describe('recall', () => {
  const message = (id: number, content: string): RoomMessage => ({
    id,
    author: 'user',
    authorId: 'u',
    kind: 'human',
    content,
    mentions: [],
    toolRuns: [],
    at: id,
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
    const recall = createRecall(
      {
        model: 'emb',
        embed: async (texts) => {
          if (fail) throw new Error('503 overloaded');
          return texts.map(() => Float32Array.from([1, 0]));
        },
      },
      { get: async () => new Map(), put: async () => {} },
      log,
    );
    const candidates = [message(1, 'a'), message(2, 'b')];
    for (let i = 0; i < 3; i++) expect(await recall(candidates, message(3, 'c'))).toEqual([]);
    expect(lines.filter((l) => l.includes('embeddings failed'))).toHaveLength(1);
    fail = false;
    expect(await recall(candidates, message(3, 'c'))).toHaveLength(2);
    fail = true;
    await recall(candidates, message(3, 'c'));
    expect(lines.filter((l) => l.includes('embeddings failed'))).toHaveLength(2);
  });
});

describe('recall ranking', () => {
  const message = (id: number, content: string): RoomMessage => ({
    id,
    author: 'user',
    authorId: 'u',
    kind: 'human',
    content,
    mentions: [],
    toolRuns: [],
    at: id,
  });
  // Each text names its direction: "x" along the first axis, "y" along the second, "xy" between them.
  const direction: Record<string, number[]> = { x: [1, 0], y: [0, 1], xy: [1, 1], nx: [-1, 0] };

  it('returns at most five messages, most similar first, and none below the similarity floor', async () => {
    const vectors = new Map<number, Float32Array>();
    const recall = createRecall(
      {
        model: 'emb',
        embed: async (texts) => texts.map((t) => Float32Array.from(direction[t.split(' ')[0] ?? ''] ?? [0, 0])),
      },
      {
        get: async (ids) =>
          new Map(ids.flatMap((id) => (vectors.has(id) ? [[id, vectors.get(id) as Float32Array]] : []))),
        put: async (entries) => {
          for (const e of entries) vectors.set(e.id, e.vector);
        },
      },
      pino({ level: 'silent' }),
    );
    const candidates = [
      message(1, 'y far'),
      message(2, 'xy close'),
      ...Array.from({ length: 6 }, (_, i) => message(3 + i, `x same ${i}`)),
      message(9, 'nx opposite'),
    ];
    const found = await recall(candidates, message(10, 'x query'));
    expect(found.map((m) => m.id)).toEqual([3, 4, 5, 6, 7]);
    const fewer = await recall(
      [message(1, 'y far'), message(2, 'xy close'), message(9, 'nx opposite')],
      message(10, 'x'),
    );
    expect(fewer.map((m) => m.id)).toEqual([2]);
  });
});
