/**
 * Money as whole nano-dollars (1e-9 USD): prices are US dollars per million tokens, so one token at $0.15/M is 150
 * nano-dollars, and a day's spend of thousands of dollars stays an exact integer.
 */
export const NANO_PER_USD = 1_000_000_000;

export function usdToNano(usd: number): number {
  return Math.round(usd * NANO_PER_USD);
}

export function toUsd(nano: number): number {
  return nano / NANO_PER_USD;
}

/** What `tokens` cost at `usdPerMillion` (rounded up: a reservation never falls short by a fraction). */
export function tokensCost(tokens: number, usdPerMillion: number): number {
  // Less a hair for floating point (3 tokens at $0.1/M are 300.00000000000006, not 301).
  return Math.max(0, Math.ceil(Math.max(0, tokens) * usdPerMillion * 1000 - 1e-6));
}

/** `$0.0123`-style: cents for sums of a dollar and more, four decimals below. */
export function formatUsd(nano: number): string {
  const usd = nano / NANO_PER_USD;
  return usd >= 1 || usd === 0 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}
