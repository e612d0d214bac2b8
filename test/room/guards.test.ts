import { describe, expect, it } from 'vitest';
import { type Exchange, pairExchanges, pairPaused } from '../../src/room/guards.js';
import { isAcknowledgement, isNoProgress } from '../../src/room/text/replies.js';

describe('no-progress guard', () => {
  it('recognises messages that only acknowledge', () => {
    for (const text of [
      'thanks!',
      'Thank you so much @code',
      'got it',
      'OK',
      'ok 👍',
      'Sounds good, thanks again!',
      '🙏',
    ]) {
      expect(isAcknowledgement(text), text).toBe(true);
    }
  });

  it('does not mistake real content for an acknowledgement', () => {
    for (const text of [
      'Thanks. The total is 42.',
      'ok, now compute the median',
      'Got it: Acme leads with 23,202.',
      '@code can you check the file?',
    ]) {
      expect(isAcknowledgement(text), text).toBe(false);
    }
  });

  it("flags a repeat of the author's previous message", () => {
    expect(isNoProgress('The answer is 42.', 'the answer is   42.')).toBe(true);
    expect(isNoProgress('The answer is 43.', 'The answer is 42.')).toBe(false);
    expect(isNoProgress('The answer is 42.', undefined)).toBe(false);
  });
});

describe('per-pair guard', () => {
  const exchange = (n: number, start = 0, step = 1000): Exchange[] =>
    Array.from({ length: n }, (_, i) => ({ author: i % 2 ? 'b' : 'a', kind: 'agent' as const, at: start + i * step }));

  it('counts messages the two agents exchange, across human messages', () => {
    const messages: Exchange[] = [];
    for (const [i, m] of exchange(10).entries()) {
      messages.push(m);
      if (i % 3 === 0) messages.push({ author: 'human', kind: 'human', at: m.at });
    }
    expect(pairExchanges(messages, 'a', 'b', 20_000)).toBe(9);
    expect(pairExchanges(messages, 'a', 'c', 20_000)).toBe(0);
  });

  it('pauses a pair past 30 exchanges within 10 minutes, and not when they are spread out', () => {
    expect(pairPaused(exchange(31), 'a', 'b', 40_000)).toBe(false); // 30 exchanges
    expect(pairPaused(exchange(32), 'a', 'b', 40_000)).toBe(true); // 31 exchanges
    const slow = exchange(40, 0, 60_000); // one a minute: at most 10 in any 10 minutes
    expect(pairPaused(slow, 'a', 'b', 40 * 60_000)).toBe(false);
  });
});
