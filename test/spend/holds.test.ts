/**
 * Calls under way hold their worst case: a call refused only because of what others hold (not what was spent)
 * waits for those holds to settle, instead of being told the day's limit is reached while money is left.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentConfig } from '../../src/config/index.js';
import type { LlmRequest } from '../../src/llm/types.js';
import { silentLogger } from '../../src/log.js';
import { SpendLimitError, SpendMeter } from '../../src/spend/meter.js';
import { usdToNano } from '../../src/spend/money.js';
import { openStore, type SqliteStore } from '../../src/store/index.js';

let store: SqliteStore;
beforeEach(() => {
  store = openStore(':memory:');
});
afterEach(async () => {
  await store.close();
});

const NOW = Date.UTC(2026, 10, 26, 12);
const DAY = '2026-11-26';
const ROOM = 'test:room';

const agent: AgentConfig = {
  name: 'data',
  file: 'agents/data.md',
  model: 'gpt-4o-mini',
  endpoint: 'http://localhost',
  apiKey: undefined,
  activation: 'always',
  tools: [],
  temperature: undefined,
  systemPrompt: 'You are data.',
  contextTokens: 32768,
  allocations: { knowledge: 30, recentActions: 10, rooms: 60 },
  // $0.004 of output a call at worst; a real answer costs a hundredth of that.
  price: { input: 1, cached: 0.5, output: 4 },
  maxOutputTokens: 1000,
  prompts: {},
};

function meter(bridgeLimitUsd: number) {
  return new SpendMeter({
    store: store.spend,
    settings: {
      SPEND_LIMIT_USD_DAY: bridgeLimitUsd,
      ROOM_SPEND_LIMIT_USD_DAY: undefined,
      SPEND_TZ: 'UTC',
      EMBEDDINGS_PRICE: undefined,
      EMBEDDINGS_MODEL: undefined,
      SUMMARY_PRICE: undefined,
      LLM_TIMEOUT_S: 30,
    },
    agents: [agent],
    clock: () => NOW,
    log: silentLogger(),
  });
}

const request = (signal?: AbortSignal): LlmRequest => ({
  model: agent.model,
  messages: [{ role: 'user', content: 'how many rows?' }],
  signal,
});

/** One call: held, a while under way, then settled with a small answer's usage. */
async function call(spend: SpendMeter, signal?: AbortSignal): Promise<'answered' | 'refused'> {
  const meterOf = spend.forCall(agent, ROOM);
  if (!meterOf) throw new Error('the agent is priced');
  try {
    const hold = await meterOf.reserve(request(signal));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await hold.settle({ input: 20, cached: 0, output: 10 });
    return 'answered';
  } catch (error) {
    if (error instanceof SpendLimitError) return 'refused';
    throw error;
  }
}

async function spent(): Promise<{ spent: number; reserved: number } | undefined> {
  return (await store.spend.day(DAY)).find((row) => row.scope === 'bridge');
}

describe('a call refused only by what others hold', () => {
  it('waits for the holds to settle: ten calls at once under a limit of two worst cases are all made', async () => {
    const spend = meter(0.0085);
    const results = await Promise.all(Array.from({ length: 10 }, () => call(spend)));
    expect(results).toEqual(Array(10).fill('answered'));
    const row = await spent();
    expect(row?.reserved).toBe(0);
    expect(row?.spent).toBeLessThanOrEqual(usdToNano(0.0085));
  });

  it('is refused at once when what was spent leaves less than its worst case', async () => {
    const spend = meter(0.0085);
    await store.spend.reserve({
      id: 'earlier',
      day: DAY,
      scopes: [{ scope: 'bridge', limit: null, amount: usdToNano(0.005) }],
      at: NOW,
    });
    await store.spend.settle('earlier', null);
    const started = Date.now();
    expect(await call(spend)).toBe('refused');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops waiting when its turn is stopped', async () => {
    const spend = meter(0.0085);
    const held = spend.forCall(agent, ROOM);
    const first = await held?.reserve(request());
    const second = await held?.reserve(request());
    const controller = new AbortController();
    const waiting = call(spend, controller.signal).catch((error: unknown) => error);
    controller.abort(new Error('/pass'));
    expect(await waiting).toEqual(new Error('/pass'));
    await first?.settle(undefined);
    await second?.settle(undefined);
  });
});
