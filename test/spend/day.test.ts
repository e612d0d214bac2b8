import { describe, expect, it } from 'vitest';
import { dayOf, formatMoment, nextDayStart } from '../../src/spend/day.js';
import { formatUsd, tokensCost, usdToNano } from '../../src/spend/money.js';

describe('the spending day', () => {
  it('is the calendar date in SPEND_TZ, and the next one starts at its midnight', () => {
    const at = Date.UTC(2026, 10, 26, 23, 30); // 23:30 UTC, 00:30 in Paris the next day
    expect(dayOf(at, 'UTC')).toBe('2026-11-26');
    expect(dayOf(at, 'Europe/Paris')).toBe('2026-11-27');
    expect(nextDayStart(at, 'UTC')).toBe(Date.UTC(2026, 10, 27, 0, 0));
    expect(nextDayStart(at, 'Europe/Paris')).toBe(Date.UTC(2026, 10, 27, 23, 0));
    expect(formatMoment(nextDayStart(at, 'UTC'), 'UTC')).toBe('2026-11-27 00:00 UTC');
  });

  it('copes with days of 23 and 25 hours (daylight saving time)', () => {
    // Europe/Paris springs forward on 2026-03-29 (a 23-hour day) and falls back on 2026-10-25 (25 hours).
    const spring = Date.UTC(2026, 2, 28, 23, 30); // 00:30 on the 29th in Paris
    expect(nextDayStart(spring, 'Europe/Paris') - Date.UTC(2026, 2, 28, 23, 0)).toBe(23 * 3_600_000);
    const autumn = Date.UTC(2026, 9, 24, 22, 30); // 00:30 on the 25th in Paris
    expect(nextDayStart(autumn, 'Europe/Paris') - Date.UTC(2026, 9, 24, 22, 0)).toBe(25 * 3_600_000);
  });
});

describe('money', () => {
  it('counts whole nano-dollars, rounding a cost up, and shows dollars', () => {
    expect(tokensCost(1, 0.15)).toBe(150);
    expect(tokensCost(1_000_000, 2.5)).toBe(usdToNano(2.5));
    expect(tokensCost(3, 0.1)).toBe(300);
    expect(tokensCost(1, 0.0001)).toBe(1); // a fraction of a nano-dollar is held as a whole one
    expect(formatUsd(usdToNano(12.5))).toBe('$12.50');
    expect(formatUsd(usdToNano(0.0123))).toBe('$0.0123');
  });
});
