/**
 * Model calls held by their price (docs/trust.md): an agent file's `spend_threshold_usd` with
 * `approvals: { spend_usd_per_call: ask }` shows a call's worst case on a card for the human who asked or an
 * operator; `deny` refuses it; SPEND_AT_LIMIT=ask holds a call a daily limit refuses for an operator only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Price } from '../../src/config/index.js';
import { agentOf } from '../helpers/harness.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

const PRICE: Price = { input: 1, cached: 0.5, output: 4 };
const MODEL = 'gpt-4o-mini';

let h: DiscordHarness;
afterEach(async () => h?.close());

async function start(spend: 'ask' | 'deny' | null, env: Record<string, string> = {}): Promise<void> {
  h = await startDiscordHarness({
    agents: [
      { name: 'data', activation: 'mention', control: true },
      {
        name: 'code',
        model: MODEL,
        activation: 'mention',
        price: PRICE,
        maxOutputTokens: 200,
        ...(spend
          ? { approvals: { modes: new Map(), bashAllow: [], bashDeny: [], spendOver: { nano: 500_000, mode: spend } } }
          : {}),
      },
    ],
    operators: ['otto'],
    humans: [{ name: 'alice', nick: 'Alice' }, { name: 'carol' }, { name: 'otto' }],
    env,
  });
  h.llm.respond(() => ({ content: 'the answer' }));
}

const botTexts = () => h.discord.botMessages('general').map((m) => m.content);
const codeBot = () => h.discord.bot('code-bot');
const card = () => botTexts().find((t) => t.startsWith('Approval needed [A1]'));

describe('model calls held by their price', () => {
  it('asks the human who asked before a call over the threshold, and makes it once approved', async () => {
    await start('ask');
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> summarise the thread`);
    await h.discord.until(() => card() !== undefined);
    expect(card()).toMatch(/wants to make a model call:\n```\na call to gpt-4o-mini, at most \$0\.\d+\n```/);
    expect(card()).toContain(`Asked for by <@${h.discord.human('alice').id}>`);
    expect(h.llm.requests).toEqual([]);
    const byCarol = await h.discord.slash('data-bot', 'carol', 'general', 'approve', { id: 'A1' });
    expect(byCarol.content).toBe('Only @Alice (who asked) or an operator can answer A1.');
    expect(h.llm.requests).toEqual([]);
    const byAlice = await h.discord.slash('data-bot', 'alice', 'general', 'approve', { id: 'A1' });
    expect(byAlice.content).toBe('A1 approved.');
    await h.discord.until(() => botTexts().includes('the answer'));
    await h.settle(asked.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
  });

  it('makes no call when the card is denied, and says so in one line', async () => {
    await start('ask');
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> summarise`);
    await h.discord.until(() => card() !== undefined);
    await h.discord.slash('data-bot', 'otto', 'general', 'deny', { id: 'A1' });
    await h.discord.until(() => botTexts().some((t) => t.includes('could not answer')));
    await h.settle(asked.id);
    expect(h.llm.requests).toEqual([]);
    expect(botTexts().at(-1)).toBe(`<@${codeBot().id}> could not answer: the model call was not made: otto denied it`);
  });

  it('refuses a call over the threshold without a card when the mode is deny', async () => {
    await start('deny');
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> summarise`);
    await h.discord.until(() => botTexts().some((t) => t.includes('could not answer')));
    await h.settle(asked.id);
    expect(h.llm.requests).toEqual([]);
    expect(card()).toBeUndefined();
    expect(botTexts().at(-1)).toMatch(/the model call was not made: its worst case is \$0\.\d+, over \$0\.0005 a call/);
  });

  it('with SPEND_AT_LIMIT=ask holds a call a limit refuses for an operator, who may let it through', async () => {
    await start(null, { SPEND_LIMIT_USD_DAY: '0.0001', SPEND_AT_LIMIT: 'ask' });
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> summarise`);
    await h.discord.until(() => card() !== undefined);
    expect(card()).toContain("it is over the bridge's $0.0001 a day, so an operator may answer");
    const byAlice = await h.discord.slash('data-bot', 'alice', 'general', 'approve', { id: 'A1' });
    expect(byAlice.content).toBe('Only an operator can answer A1.');
    const byOtto = await h.discord.slash('data-bot', 'otto', 'general', 'approve', { id: 'A1' });
    expect(byOtto.content).toBe('A1 approved.');
    await h.discord.until(() => botTexts().includes('the answer'));
    await h.settle(asked.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
  });

  it('with SPEND_AT_LIMIT=refuse (the default) refuses at the limit as before, without a card', async () => {
    await start(null, { SPEND_LIMIT_USD_DAY: '0.0001' });
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> summarise`);
    await h.discord.until(() => botTexts().some((t) => t.includes('spending limit')));
    await h.settle(asked.id);
    expect(h.llm.requests).toEqual([]);
    expect(card()).toBeUndefined();
  });
});
