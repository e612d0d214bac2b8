/**
 * Rule 7.2, the pair guard: two agents that exchange too much too fast stop waking each other.
 */

export interface PairGuardOptions {
  /** seed: more than 30 messages between the same two agents... */
  readonly limit: number;
  /** ...within 10 minutes. */
  readonly windowMs: number;
}

export const PAIR_GUARD: PairGuardOptions = { limit: 30, windowMs: 10 * 60_000 };

export interface Exchange {
  readonly author: string;
  readonly kind: 'human' | 'agent' | 'system';
  readonly at: number;
}

/** A stable key for an unordered pair of agents. */
export function pairKey(a: string, b: string): string {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()].sort();
  return `${x}+${y}`;
}

/**
 * How many messages `a` and `b` exchanged in the window before `now`: agent messages by one of
 * them that follow an agent message by the other. Human messages in between do not reset it.
 */
export function pairExchanges(
  messages: readonly Exchange[],
  a: string,
  b: string,
  now: number,
  options: PairGuardOptions = PAIR_GUARD,
): number {
  const key = pairKey(a, b);
  let count = 0;
  let lastAgent: string | undefined;
  for (const message of messages) {
    if (message.kind !== 'agent') continue; // humans' messages neither count nor break the chain
    if (lastAgent && message.at > now - options.windowMs && pairKey(lastAgent, message.author) === key) {
      if (lastAgent.toLowerCase() !== message.author.toLowerCase()) count++;
    }
    lastAgent = message.author;
  }
  return count;
}

/** True when `a` and `b` have exchanged more than the limit within the window: they are paused. */
export function pairPaused(
  messages: readonly Exchange[],
  a: string,
  b: string,
  now: number,
  options: PairGuardOptions = PAIR_GUARD,
): boolean {
  return pairExchanges(messages, a, b, now, options) > options.limit;
}
