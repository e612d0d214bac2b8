import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatCompletionMessageParam } from '../../src/llm/client.js';
import { SUMMARY_INSTRUCTIONS } from '../../src/llm/summaries.js';
import { type ContextSources, turnContext } from '../../src/llm/turn-context.js';
import { storeServices } from '../../src/llm/turn-services.js';
import { EMPTY_STATE } from '../../src/room/state.js';
import { SpendMeter } from '../../src/spend/meter.js';
import { openStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { type FakeOpenAI, type RecordedRequest, startFakeOpenAI } from '../fakes/openai-server/index.js';
import { testConfig } from '../helpers/config.js';
import { captureLogger } from '../helpers/harness.js';
import { history as storedHistory } from '../helpers/store-views.js';
import { human, message, stateAfter } from '../store/contract.js';

let fake: FakeOpenAI;
let store: SqliteStore;
const ROOM = 'console:main';

beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => fake.close());
beforeEach(() => {
  store = openStore(':memory:');
  fake.requests.length = 0;
  // The summariser: the lines of the block that hold a figure or a code, as its summary.
  fake.respond((request) => {
    if (!isSummary(request)) return { content: '[pass]' };
    const block = String(request.messages[1]?.content ?? '');
    const facts = block.split('\n').filter((line) => /\d{2}|code/.test(line.replace(/message \d+/, '')));
    return { content: `Said before: ${facts.join(' ') || 'nothing of note.'}` };
  });
});
afterEach(async () => store.close());

const isSummary = (request: RecordedRequest) => request.messages[0]?.content === SUMMARY_INSTRUCTIONS;
const summaryCalls = () => fake.requests.filter(isSummary);

/** Stores `count` messages in the room (ids 1..count); `patch` gives some an audience or a fact. */
async function fill(count: number, patch: (i: number) => Partial<Parameters<typeof human>[3]> = () => ({})) {
  const room = await store.rooms.open('console', 'main');
  let state = EMPTY_STATE;
  for (let i = 1; i <= count; i++) {
    const m = human(i, `message ${i}: ${'we talked it over. '.repeat(8)}`, [`p${i}`], patch(i));
    state = stateAfter(state, m);
    await store.rooms.commit(room.id, [message(m)], state);
  }
}

async function more(from: number, to: number) {
  const room = await store.rooms.open('console', 'main');
  let state = room.state ?? EMPTY_STATE;
  for (let i = from; i <= to; i++) {
    const m = human(i, `message ${i}: ${'we talked it over. '.repeat(8)}`, [`p${i}`]);
    state = stateAfter(state, m);
    await store.rooms.commit(room.id, [message(m)], state);
  }
}

const env = (extra: Record<string, string> = {}) => ({
  OPENAI_BASE_URL: fake.baseURL,
  HISTORY_LIMIT: '20',
  SUMMARY_MODEL: 'summarizer',
  ...extra,
});

function setup(extra: Record<string, string> = {}, withSpend = false) {
  const config = testConfig({ agents: [{ name: 'ana', model: 'm', activation: 'always' }], env: env(extra) });
  const { logger, lines } = captureLogger();
  const spend = new SpendMeter({
    store: store.spend,
    settings: config.settings,
    agents: [],
    clock: Date.now,
    log: logger,
  });
  const services = storeServices(store, config, logger, Date.now, undefined, undefined, (room) =>
    withSpend ? spend.forSummaries(room) : undefined,
  );
  const agent = config.agents[0];
  if (!agent) throw new Error('no agent');
  /** The agent's context, with the bridge's services or (`alone`) with none at all. */
  const context = async (alone = false, sources: ContextSources | undefined = alone ? undefined : services) =>
    (
      await turnContext({
        agent,
        agentNames: ['ana'],
        place: { room: ROOM, audience: null },
        roomId: 1,
        // The bridge passes the newest HISTORY_LIMIT + 1 messages (at least 64).
        history: await storedHistory(store, 'console', 'main', 64),
        situation: 'observe',
        tools: [],
        settings: config.settings,
        sources,
      })
    ).messages;
  return { config, services, context, lines, spend };
}

const texts = (messages: readonly ChatCompletionMessageParam[]) => messages.map((m) => String(m.content));
const summariesIn = (messages: readonly ChatCompletionMessageParam[]) =>
  texts(messages).filter((t) => t.startsWith('[summary of '));

describe('summaries of older history (SUMMARY_MODEL)', () => {
  it('lets a fact from a block that left the window still reach the agent, where the block stood', async () => {
    await fill(45, (i) => (i === 3 ? { text: 'the vendor code is ZEBRA-42, due on the 17th' } : {}));
    const messages = await setup().context();
    const shown = texts(messages);
    // The window keeps the newest messages; the first blocks (ids 0-9, 10-19, ...) stand as summaries after the
    // system message and before the history.
    expect(shown.some((t) => t.startsWith('[@alice]: the vendor code'))).toBe(false);
    expect(summariesIn(messages)[0]).toContain('ZEBRA-42');
    expect(shown.indexOf(summariesIn(messages)[0] ?? '')).toBe(1);
    expect(shown.findIndex((t) => t.startsWith('[@alice]: message'))).toBeGreaterThan(summariesIn(messages).length);
  });

  it('keeps the prefix before and through the summaries byte-identical across turns', async () => {
    await fill(45);
    const { context } = setup();
    const first = texts(await context());
    await more(46, 47);
    const second = texts(await context());
    const through = 1 + summariesIn(second.map((content) => ({ role: 'user', content }) as const)).length;
    expect(through).toBeGreaterThan(1);
    expect(second.slice(0, through)).toEqual(first.slice(0, through));
    // When the window drops the next block, its summary joins after the others: the prefix before it holds.
    await more(48, 75);
    const third = texts(await context());
    expect(third.slice(0, through)).toEqual(first.slice(0, through));
    expect(summariesIn(third.map((content) => ({ role: 'user', content }) as const)).length).toBeGreaterThan(
      through - 1,
    );
  });

  it('summarises a block once, for concurrent turns and after a restart', async () => {
    await fill(45);
    const { context } = setup();
    await Promise.all([context(), context(), context()]);
    const made = summaryCalls().length;
    expect(made).toBeGreaterThan(0);
    const blocks = summaryCalls().map((r) => String(r.messages[1]?.content).split('\n')[0]);
    expect(new Set(blocks).size).toBe(made);
    await context();
    // A new summariser over the same store (a restart) finds them stored.
    await setup().context();
    expect(summaryCalls()).toHaveLength(made);
  });

  it("never summarises a block holding a private message into anyone's prompt: it is left out as without summaries", async () => {
    await fill(45, (i) => (i === 4 ? { audience: ['alice', 'ben'], text: 'the private code is OWL-77' } : {}));
    const messages = await setup().context();
    expect(texts(messages).join('\n')).not.toContain('OWL-77');
    expect(summaryCalls().some((r) => String(r.messages[1]?.content).includes('OWL-77'))).toBe(false);
    // The blocks after it are summarised all the same.
    expect(summariesIn(messages).length).toBeGreaterThan(0);
  });

  it('meters summary calls against the spending limits of the bridge and the room', async () => {
    await fill(45);
    const { context, spend } = setup({ SPEND_LIMIT_USD_DAY: '5', SUMMARY_PRICE: '1,4' }, true);
    await context();
    expect(summaryCalls().length).toBeGreaterThan(0);
    const lines = await spend.lines(ROOM);
    const bridge = lines.find((l) => l.kind === 'bridge');
    const room = lines.find((l) => l.kind === 'room');
    expect(bridge?.spent).toBeGreaterThan(0);
    expect(room?.spent).toBe(bridge?.spent);
    expect(bridge?.reserved).toBe(0);
  });

  it('leaves the block out when the summary fails, and the turn goes on', async () => {
    await fill(45);
    fake.respond((request) => (isSummary(request) ? { status: 500 } : { content: '[pass]' }));
    const { context, lines } = setup({ LLM_MAX_RETRIES: '0' });
    const messages = await context();
    expect(summariesIn(messages)).toEqual([]);
    expect(lines.some((l) => l.msg === 'could not summarise a block of older history')).toBe(true);
  });

  it('changes nothing when SUMMARY_MODEL is unset', async () => {
    await fill(45);
    const { services, context } = setup({ SUMMARY_MODEL: '' });
    expect(services.summaries).toBeUndefined();
    expect(await context()).toEqual(await context(true));
    expect(summaryCalls()).toEqual([]);
  });
});
