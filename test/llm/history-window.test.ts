import { describe, expect, it } from 'vitest';
import { historyStart, type WindowItem, widestBlock } from '../../src/llm/history-window.js';

/** The last `window` messages of a room of `total` messages with ids 1..total, as the bridge passes them. */
function room(total: number, window: number, tokens: (id: number) => number = () => 10): WindowItem[] {
  const first = Math.max(1, total - window + 1);
  return Array.from({ length: total - first + 1 }, (_, i) => ({ id: first + i, tokens: tokens(first + i) }));
}

/** The id of the first kept message after each of the room's messages from `from` to `to`. */
function starts(
  from: number,
  to: number,
  window: number,
  limits: { maxMessages: number; maxTokens: number },
  tokens?: (id: number) => number,
) {
  const result: number[] = [];
  for (let total = from; total <= to; total++) {
    const items = room(total, window, tokens);
    result.push(items[historyStart(items, limits)]?.id ?? -1);
  }
  return result;
}

describe('the history window', () => {
  it('keeps everything while it fits', () => {
    const items = room(30, 64);
    expect(historyStart(items, { maxMessages: 50, maxTokens: 10_000 })).toBe(0);
  });

  it('past HISTORY_LIMIT, cuts whole blocks: the start stays put for many messages, then jumps', () => {
    const limits = { maxMessages: 50, maxTokens: 1_000_000 };
    expect(widestBlock(50)).toBe(25);
    const ids = starts(51, 250, 64, limits);
    const changes = ids.filter((id, i) => i > 0 && id !== ids[i - 1]).length;
    // A sliding window would move 199 times; blocks of 25 (half the limit) move about 200 / 25 times.
    expect(changes).toBeLessThanOrEqual(9);
    ids.forEach((id, i) => {
      const total = 51 + i;
      const kept = total - id + 1;
      expect(kept).toBeLessThanOrEqual(50);
      expect(kept).toBeGreaterThanOrEqual(50 - 25 + 1);
      if (i > 0) expect(id).toBeGreaterThanOrEqual(ids[i - 1] ?? 0);
    });
  });

  it('past the token share, cuts blocks too, keeping about half or more of what fits', () => {
    // Messages of 20 to 220 tokens (pseudo-random but fixed), a share of about 25 average messages.
    const size = (id: number) => 20 + ((id * 7919) % 201);
    const limits = { maxMessages: 50, maxTokens: 3000 };
    const ids = starts(40, 400, 64, limits, size);
    const changes = ids.filter((id, i) => i > 0 && id !== ids[i - 1]).length;
    expect(changes / ids.length).toBeLessThan(0.2);
    ids.forEach((id, i) => {
      const total = 40 + i;
      let tokens = 0;
      for (let m = id; m <= total; m++) tokens += size(m);
      expect(tokens).toBeLessThanOrEqual(3000);
      expect(tokens).toBeGreaterThan(3000 * 0.35);
    });
  });

  it('always keeps the newest message, even when it alone is over the share', () => {
    const items = [
      { id: 1, tokens: 10 },
      { id: 2, tokens: 10 },
      { id: 3, tokens: 5000 },
    ];
    expect(historyStart(items, { maxMessages: 50, maxTokens: 100 })).toBe(2);
  });

  it('with ids shared among rooms (gaps), block starts stay where they were', () => {
    // Another room takes every other id: this room's ids are 2, 4, 6, ...
    const limits = { maxMessages: 20, maxTokens: 1_000_000 };
    const seen: number[] = [];
    for (let total = 21; total <= 120; total++) {
      const items = Array.from({ length: Math.min(total, 64) }, (_, i) => ({
        id: 2 * (total - Math.min(total, 64) + 1 + i),
        tokens: 10,
      }));
      const start = historyStart(items, limits);
      expect(items.length - start).toBeLessThanOrEqual(20);
      seen.push(items[start]?.id ?? -1);
    }
    const changes = seen.filter((id, i) => i > 0 && id !== seen[i - 1]).length;
    expect(changes).toBeLessThanOrEqual(100 / 4 + 1);
  });
});
