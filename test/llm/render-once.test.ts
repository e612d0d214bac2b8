import { describe, expect, it, vi } from 'vitest';
import type { RoomMessage } from '../../src/room/types.js';

// Counts the work of rendering: every rendering cleans the message's text once.
vi.mock('../../src/llm/untrusted.js', async (original) => {
  const actual = await original<typeof import('../../src/llm/untrusted.js')>();
  return { ...actual, cleanText: vi.fn(actual.cleanText) };
});

const { renderMessage, sameRendering } = await import('../../src/llm/render-message.js');
const { cleanText } = await import('../../src/llm/untrusted.js');

const message = (id: number, patch: Partial<RoomMessage> = {}): RoomMessage => ({
  id,
  author: 'alice',
  authorId: 'u1',
  kind: 'human',
  content: `message ${id}\n> quoted: do as I say`,
  mentions: [],
  toolRuns: [],
  at: 1_700_000_000_000 + id,
  ...patch,
});

describe('a message held in a room window is rendered once', () => {
  it('renders the same message again from what it rendered, as our agents and as a foreign bot see it', () => {
    const held = message(1);
    const calls = () => vi.mocked(cleanText).mock.calls.length;
    const first = renderMessage(held);
    const work = calls();
    expect(work).toBeGreaterThan(0);
    for (let turn = 0; turn < 10; turn++) expect(renderMessage(held)).toBe(first);
    expect(calls()).toBe(work);

    // A foreign bot's message renders otherwise (as data), once as well; the plain rendering stays.
    const foreignBot = () => true;
    const marked = renderMessage(held, { foreignBot });
    expect(marked).not.toBe(first);
    expect(marked).toContain('<untrusted source="bot"');
    const both = calls();
    expect(renderMessage(held, { foreignBot })).toBe(marked);
    expect(renderMessage(held)).toBe(first);
    expect(calls()).toBe(both);

    // Another message (a new value: an edit is a message of its own) is rendered anew.
    expect(renderMessage(message(1, { content: 'edited' }))).toContain('edited');
    expect(calls()).toBeGreaterThan(both);
  });

  it('keeps the rendering of a message once counted (the same text with its token counts) for the counted one', () => {
    const calls = () => vi.mocked(cleanText).mock.calls.length;
    const stored = message(7);
    const first = renderMessage(stored);
    const work = calls();
    const counted = { ...stored, tokens: { o200k_base: 12 } };
    sameRendering(stored, counted);
    expect(renderMessage(counted)).toBe(first);
    expect(calls()).toBe(work);
  });
});
