/**
 * Spending limits, as a room meets them: the costliest loop stops at the limit with one line, a limit on one agent
 * silences that agent only, restarts keep the day's spend, /budget shows and raises the limits, and a request
 * waiting on a silenced agent settles at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Price } from '../../src/config/index.js';
import { tokenCounter } from '../../src/llm/tokens.js';
import { costOf } from '../../src/spend/meter.js';
import { usdToNano } from '../../src/spend/money.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, situationOf, startHarness } from '../helpers/harness.js';

const PRICE: Price = { input: 1, cached: 0.5, output: 4 };
const MODEL = 'gpt-4o-mini';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Each rally agent answers the other by name, with a new line each time. */
function rally(): (r: RecordedRequest) => { content: string } {
  let n = 0;
  return (r) => {
    n++;
    return { content: agentOf(r) === 'ping' ? `@pong ping ${n}: your serve.` : `@ping pong ${n}: back to you.` };
  };
}

/** What the endpoint reported, priced: the bridge's own record of usage, at the agents' price. */
async function reportedCost(harness: Harness): Promise<number> {
  const rows = await harness.store.usage.total();
  return rows.reduce((sum, row) => sum + costOf(row, PRICE), 0);
}

async function spendOf(harness: Harness, scope: string) {
  const day = new Date().toISOString().slice(0, 10);
  return (await harness.store.spend.day(day)).find((row) => row.scope === scope);
}

const limitLines = (harness: Harness) => harness.adapter.transcript().filter((line) => line.includes('spending limit'));

describe('the costliest loop under a daily limit', () => {
  it('stops at the limit with one line, and never spends more than it, by its own count or the endpoint’s', async () => {
    const limit = 0.004;
    h = await startHarness({
      agents: [
        { name: 'ping', model: MODEL, activation: 'always', price: PRICE, maxOutputTokens: 40 },
        { name: 'pong', model: MODEL, activation: 'always', price: PRICE, maxOutputTokens: 40 },
      ],
      env: { TURN_LIMIT: '500', SPEND_LIMIT_USD_DAY: String(limit) },
      llmUsage: 'openai',
    });
    const harness = h;
    harness.llm.respond(rally());
    await harness.adapter.say('@ping serve the rally');
    await harness.bridge.idle();

    const agentMessages = harness.adapter.transcript().filter((line) => !line.startsWith('[system]'));
    expect(agentMessages.length).toBeGreaterThan(2);
    expect(agentMessages.length).toBeLessThan(40); // the limit stopped it, far below TURN_LIMIT
    expect(limitLines(harness)).toEqual([
      expect.stringMatching(
        /^\[system\]: The agents have reached the bridge's spending limit \(\$0\.0040 a day\) and stay silent until \d{4}-\d\d-\d\d 00:00 UTC\. An operator can raise it with \/budget bridge <dollars>\.$/,
      ),
    ]);
    const bridge = await spendOf(harness, 'bridge');
    expect(bridge?.reserved).toBe(0);
    expect(bridge?.spent).toBeGreaterThan(0);
    expect(bridge?.spent).toBeLessThanOrEqual(usdToNano(limit));
    expect(await reportedCost(harness)).toBe(bridge?.spent);
    expect(await reportedCost(harness)).toBeLessThanOrEqual(usdToNano(limit));

    // A restart keeps the day's spend: the agents stay silent, and the room is not told again.
    const calls = harness.llm.requests.length;
    await harness.restart();
    await harness.adapter.say('@ping one more rally?');
    await harness.bridge.idle();
    expect(harness.llm.requests).toHaveLength(calls);
    expect(limitLines(harness)).toHaveLength(1);

    // An operator raises the limit: the agents speak again.
    expect(await harness.adapter.command('budget', 'bridge 1')).toMatch(
      /^The bridge's spending limit is now \$1\.00 a day \(spent today: \$0\.00\d\d\)\.$/,
    );
    harness.llm.respond(() => ({ content: 'Back on the court.' }));
    await harness.adapter.say('@ping one more rally?');
    await harness.bridge.idle();
    expect(harness.adapter.transcript().at(-1)).toBe('[@ping]: Back on the court.');
  }, 60_000);
});

describe('a server that ignores the output cap', () => {
  for (const stream of [true, false]) {
    it(`cannot take an agent past its limit in one call (stream: ${stream})`, async () => {
      // The cap is 50 tokens; the server writes 3,000. The limit holds one call's worst case, and a little more.
      h = await startHarness({
        agents: [{ name: 'data', model: MODEL, price: PRICE, maxOutputTokens: 50, spendLimitUsdDay: 0.003 }],
        env: { LLM_STREAM: String(stream) },
        llmUsage: 'openai',
      });
      const harness = h;
      harness.llm.respond(() => ({ content: 'row '.repeat(3000), ignoreMaxTokens: true }));
      await harness.adapter.say('@data list the rows');
      await harness.bridge.idle();
      const [reply, ...rest] = harness.adapter.transcript();
      expect(rest).toEqual([]);
      expect(reply).toMatch(/^\[@data\]: (row )+row?\n\n\[cut off: the model reached its output limit\]$/);
      expect(tokenCounter(MODEL).count(reply?.replace(/^\[@data\]: |\n\n\[cut off.*$/g, '') ?? '')).toBeLessThanOrEqual(
        50,
      );
      const agent = await spendOf(harness, 'agent:data');
      expect(agent?.reserved).toBe(0);
      expect(agent?.spent).toBeGreaterThan(0);
      expect(agent?.spent).toBeLessThanOrEqual(usdToNano(0.003));
    }, 30_000);
  }
});

describe('many rooms at once under a bridge limit', () => {
  it('answers every room while money is left: a call refused only by what others hold waits for it', async () => {
    // Each call holds $0.004 of output at worst and spends a twentieth of that: two holds fit at once, ten calls do.
    const cheapInput: Price = { input: 0.1, cached: 0.05, output: 4 };
    h = await startHarness({
      agents: [{ name: 'data', model: MODEL, price: cheapInput, maxOutputTokens: 1000 }],
      env: { SPEND_LIMIT_USD_DAY: '0.01' },
      llmUsage: 'openai',
    });
    const harness = h;
    harness.llm.respond(() => ({ content: 'Forty-two rows.', delayMs: 200 }));
    const rooms = Array.from({ length: 10 }, (_, i) => `r${i}`);
    await Promise.all(rooms.map((channel) => harness.adapter.say('@data how many rows?', { channel })));
    await harness.bridge.idle();
    for (const channel of rooms) expect(harness.adapter.transcript(channel)).toEqual(['[@data]: Forty-two rows.']);
    const bridge = await spendOf(harness, 'bridge');
    expect(bridge?.reserved).toBe(0);
    expect(bridge?.spent).toBeLessThanOrEqual(usdToNano(0.01));
  }, 60_000);
});

describe("one agent's limit", () => {
  it('silences that agent only, and a request waiting on it settles at once', async () => {
    h = await startHarness({
      agents: [
        { name: 'data', model: MODEL, price: PRICE, spendLimitUsdDay: 0.000_001 },
        { name: 'pm', model: MODEL, price: PRICE },
      ],
    });
    const harness = h;
    harness.llm.respond((r) => {
      if (agentOf(r) !== 'pm') return { content: 'data never gets here' };
      if (/request #\d+/.test(situationOf(r)) && situationOf(r).includes('over its spending limit')) {
        return { content: 'Data is out of budget today; I will estimate instead.' };
      }
      return { content: '@data what is the Q3 total?' };
    });
    await harness.adapter.say('@data how many rows?');
    await harness.bridge.idle();
    expect(harness.adapter.transcript()).toEqual([
      expect.stringMatching(/^\[system\]: @data has reached its spending limit \(\$0\.0000 a day\) and stays silent/),
    ]);
    await harness.adapter.say('@pm get me the Q3 total from data');
    await harness.bridge.idle();
    expect(harness.adapter.transcript().slice(1)).toEqual([
      '[@pm]: @data what is the Q3 total?',
      '[@pm]: Data is out of budget today; I will estimate instead.',
    ]);
    expect(harness.llm.requests.filter((r) => agentOf(r) === 'data')).toHaveLength(0);
    const resume = harness.llm.requests.filter((r) => agentOf(r) === 'pm').at(-1);
    expect(resume && situationOf(resume)).toContain('@data (over its spending limit)');
  }, 30_000);
});

describe('/budget', () => {
  it('shows the day’s spend against each limit, sets and clears limits, and is for operators only', async () => {
    h = await startHarness({
      agents: [
        { name: 'data', model: MODEL, price: PRICE, spendLimitUsdDay: 2 },
        { name: 'free', model: MODEL },
      ],
    });
    const harness = h;
    harness.llm.respond(() => ({ content: 'Forty-two rows.' }));
    await harness.adapter.say('@data how many rows?');
    await harness.bridge.idle();
    const shown = await harness.adapter.command('budget');
    expect(shown.split('\n')).toEqual([
      expect.stringMatching(/^Spending on \d{4}-\d\d-\d\d \(UTC\):$/),
      expect.stringMatching(/^- bridge: \$0\.00\d\d no limit$/),
      expect.stringMatching(/^- this room: \$0\.00\d\d no limit$/),
      expect.stringMatching(/^- @data: \$0\.00\d\d of \$2\.00 a day$/),
      '- @free: $0.00 no limit',
    ]);
    expect(await harness.adapter.command('budget', 'agent data 5')).toMatch(
      /^@data's spending limit is now \$5\.00 a day \(spent today: /,
    );
    expect(await harness.adapter.command('budget')).toMatch(
      /- @data: \$0\.00\d\d of \$5\.00 a day \(set with \/budget\)/,
    );
    expect(await harness.adapter.command('budget', 'agent data default')).toMatch(/\$2\.00 a day \(as configured\)/);
    expect(await harness.adapter.command('budget', 'agent free 1')).toBe(
      '@free has no price in agents/free.md, so its spending cannot be limited.',
    );
    expect(await harness.adapter.command('budget', 'room 5')).toMatch(/@free has no price/);
    expect(await harness.adapter.command('budget', 'agent data off')).toMatch(/^@data's spending is no longer limited/);
    expect(await harness.adapter.command('budget', 'everything 5')).toMatch(/^Use \/budget to show the limits/);
    expect(await harness.adapter.command('budget', 'agent data 5', { operator: false })).toBe(
      'Only operators can use /budget.',
    );
    expect(await harness.adapter.command('status')).toContain('Spending today:');
  }, 30_000);

  it('refuses a bridge or room limit while embeddings or summaries have no price, as start-up does', async () => {
    h = await startHarness({
      agents: [{ name: 'data', model: MODEL, price: PRICE }],
      env: { EMBEDDINGS_MODEL: 'text-embedding-3-small', SUMMARY_MODEL: MODEL },
    });
    const harness = h;
    const refused =
      "A bridge's limit applies to every call, and EMBEDDINGS_MODEL has no EMBEDDINGS_PRICE, SUMMARY_MODEL has no SUMMARY_PRICE: price them first (in the environment, then restart).";
    expect(await harness.adapter.command('budget', 'bridge 0.00001')).toBe(refused);
    expect(await harness.adapter.command('budget', 'room 5')).toBe(refused.replace("A bridge's", "A room's"));
    expect((await harness.adapter.command('budget')).split('\n').slice(1, 3)).toEqual([
      '- bridge: $0.00 no limit',
      '- this room: $0.00 no limit',
    ]);
    // Taking a limit off needs no price.
    expect(await harness.adapter.command('budget', 'bridge off')).toMatch(
      /^The bridge's spending is no longer limited/,
    );
  }, 30_000);
});
