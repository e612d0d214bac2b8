import { afterEach, describe, expect, it } from 'vitest';
import type { Inbound } from '../../src/ports.js';
import { agentOf, type Harness, startHarness } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';

let h: Harness;
afterEach(async () => h?.close());

const MINUTE = 60_000;
const AGENTS = [
  { name: 'data', activation: 'mention' as const },
  { name: 'code', activation: 'mention' as const },
];

function human(text: string, extra: Partial<Inbound> = {}): Inbound {
  return {
    platform: 'test',
    channel: 'room',
    messageId: `m-${text}`,
    author: { id: 'u-alice', name: 'alice', kind: 'human' },
    text,
    at: Date.now(),
    ...extra,
  };
}

/** An edit of `original` (its id and time), made `after` ms later, with the full new text. */
function edit(original: Inbound, text: string, after = MINUTE, extra: Partial<Inbound> = {}): Inbound {
  const at = (original.at ?? 0) + after;
  return human(text, {
    messageId: `${original.messageId}:edit:${at}`,
    at,
    edit: { of: original.messageId, originalAt: original.at ?? 0 },
    ...extra,
  });
}

async function receive(event: Inbound): Promise<void> {
  await h.adapter.sink?.receive(event);
  await h.bridge.idle();
}

const stored = () => history(h.store, 'test', 'room', 50);

describe('addressed by the platform', () => {
  it("wakes the agent a human's platform reply addresses, as if mentioned", async () => {
    h = await startHarness({ agents: AGENTS });
    h.llm.respond((request) => ({ content: `${agentOf(request)} here` }));
    await receive(human('what do you think?', { addressed: ['CODE'] }));
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
    expect((await stored())[0]?.mentions).toEqual(['code']);
  });

  it("does not let an agent's message address anyone that way", async () => {
    h = await startHarness({ agents: AGENTS });
    h.llm.respond(() => ({ content: 'noted' }));
    await receive({ ...human('thanks'), author: { id: 'bot-data', name: 'data', kind: 'agent' }, addressed: ['code'] });
    expect(h.llm.requests).toHaveLength(0);
  });
});

describe('edits', () => {
  it('wakes an agent an edit newly mentions, once, and stores the edit as a message of its own', async () => {
    h = await startHarness({ agents: AGENTS });
    h.llm.respond((request) => ({ content: `${agentOf(request)} on it` }));
    const original = human('@data can you check the numbers?');
    await receive(original);
    expect(h.llm.requests.map(agentOf)).toEqual(['data']);

    await receive(edit(original, '@data @code can you check the numbers?'));
    // Only @code, newly addressed, is asked; @data, asked already, is not asked again.
    expect(h.llm.requests.map(agentOf)).toEqual(['data', 'code']);
    const edited = (await stored()).find((message) => message.content.startsWith('(edited)'));
    expect(edited).toMatchObject({ content: '(edited) @data @code can you check the numbers?', mentions: ['code'] });

    // The same edit delivered again, and a later edit that adds no one, change nothing.
    await receive(edit(original, '@data @code can you check the numbers?'));
    await receive(edit(original, '@data @code please check the numbers?', 2 * MINUTE));
    expect(h.llm.requests).toHaveLength(2);
    expect((await stored()).filter((message) => message.content.startsWith('(edited)'))).toHaveLength(1);
  });

  it('ignores an edit that adds a mention after EDIT_WAKE_MINUTES', async () => {
    h = await startHarness({ agents: AGENTS, env: { EDIT_WAKE_MINUTES: '2' } });
    h.llm.respond(() => ({ content: 'late' }));
    const original = human('can someone check the numbers?');
    await receive(original);
    await receive(edit(original, '@code can someone check the numbers?', 2 * MINUTE + 1));
    expect(h.llm.requests).toHaveLength(0);
    expect(await stored()).toHaveLength(1);
  });

  it("never takes an agent's edit (a streamed reply) as a request", async () => {
    h = await startHarness({ agents: AGENTS });
    h.llm.respond(() => ({ content: 'no' }));
    const reply = { ...human('working on it'), author: { id: 'bot-data', name: 'data', kind: 'agent' as const } };
    await receive(reply);
    await receive({ ...edit(reply, 'working on it, @code'), author: reply.author });
    expect(h.llm.requests).toHaveLength(0);
  });
});
