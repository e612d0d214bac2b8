import type { SpendLimitReached } from '../room/events.js';
import { formatMoment } from './day.js';
import type { ReachedLimit } from './meter.js';
import { formatUsd } from './money.js';

/** A limit a call would have crossed, as the room tells it (once per limit and day). */
export function reachedLimit(reached: ReachedLimit, timeZone: string): SpendLimitReached {
  return {
    scope: reached.kind,
    ...(reached.kind === 'agent' ? { agent: reached.name } : {}),
    amount: formatUsd(reached.limit),
    until: formatMoment(reached.until, timeZone),
    key: `${reached.kind}:${reached.name}:${reached.day}:${reached.limit}`,
  };
}
