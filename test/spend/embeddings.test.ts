/** Embeddings count against the spending limits too: held before each call, settled with the tokens it took. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEmbedder } from '../../src/llm/embeddings.js';
import { silentLogger } from '../../src/log.js';
import { SpendLimitError, SpendMeter } from '../../src/spend/meter.js';
import { tokensCost } from '../../src/spend/money.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';

let fake: FakeOpenAI;
let store: SqliteStore;
beforeEach(async () => {
  fake = await startFakeOpenAI({});
  store = openStore(':memory:');
});
afterEach(async () => {
  await fake.close();
  await store.close();
});

const DAY = '2026-11-26';
const NOW = Date.UTC(2026, 10, 26, 12);

function meter(bridgeLimitUsd?: number) {
  return new SpendMeter({
    store: store.spend,
    settings: {
      SPEND_LIMIT_USD_DAY: bridgeLimitUsd,
      ROOM_SPEND_LIMIT_USD_DAY: undefined,
      SPEND_TZ: 'UTC',
      EMBEDDINGS_PRICE: 0.02,
      EMBEDDINGS_MODEL: 'text-embedding-3-small',
      SUMMARY_PRICE: undefined,
    },
    agents: [],
    clock: () => NOW,
    log: silentLogger(),
  });
}

describe('embeddings under spending limits', () => {
  it("are counted against the bridge and the room at EMBEDDINGS_PRICE, with the endpoint's token count", async () => {
    const embedder = createEmbedder({
      baseURL: fake.baseURL,
      apiKey: 'k',
      model: 'text-embedding-3-small',
      timeoutMs: 5000,
    });
    const texts = ['the launch is on Friday', 'the budget is 40k'];
    await embedder.embed(texts, meter().forEmbeddings('test:room', embedder.model));
    const rows = await store.spend.day(DAY);
    const expected = tokensCost(Math.ceil(texts.join('').length / 4) + 1, 0.02);
    expect(rows.map((r) => r.scope)).toEqual(['bridge', 'room:test:room']);
    expect(rows.every((r) => r.reserved === 0 && r.spent > 0 && r.spent <= expected)).toBe(true);
  });

  it('are not made when they do not fit', async () => {
    const embedder = createEmbedder({
      baseURL: fake.baseURL,
      apiKey: 'k',
      model: 'text-embedding-3-small',
      timeoutMs: 5000,
    });
    const error = await embedder
      .embed(['x '.repeat(500)], meter(0.000_001).forEmbeddings('test:room', embedder.model))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SpendLimitError);
    expect(fake.embeddingRequests).toHaveLength(0);
  });
});
