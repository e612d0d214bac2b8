/** The spending limits' words: which limit a call would cross, and the errors of a call that was not made. */
import { RoundtableError } from '../errors.js';
import { formatUsd } from './money.js';

export type LimitKind = 'bridge' | 'room' | 'agent';

/** A limit's key in the store: `bridge`, `room:<key>`, `agent:<name>`. */
export const scopeOf = (kind: LimitKind, name: string): string => (kind === 'bridge' ? 'bridge' : `${kind}:${name}`);

export function kindOf(scope: string): { kind: LimitKind; name: string } {
  if (scope === 'bridge') return { kind: 'bridge', name: 'bridge' };
  const at = scope.indexOf(':');
  return { kind: scope.slice(0, at) as LimitKind, name: scope.slice(at + 1) };
}

/**
 * A person's word before a model call (docs/trust.md): a call whose worst case is above the agent's threshold
 * (`spend_threshold_usd`), or one a spending limit would refuse when SPEND_AT_LIMIT=ask. Resolves with the answer.
 */
export interface SpendGate {
  /** Nano-dollars: a call whose worst case is above it asks first (`ask`) or is not made (`deny`). */
  readonly over?: { readonly nano: number; readonly mode: 'ask' | 'deny' } | undefined;
  /** SPEND_AT_LIMIT=ask: a call a limit refuses asks an operator instead of failing at once. */
  readonly atLimit: boolean;
  ask(
    what: { readonly worst: number; readonly reached?: ReachedLimit },
    signal: AbortSignal | undefined,
  ): Promise<{ readonly approved: boolean; readonly reason: string }>;
}

/** A model call a person did not approve (or an agent file's `deny` over its threshold): it was not made. */
export class SpendNotApproved extends RoundtableError {
  constructor(reason: string) {
    super('spend', `the model call was not made: ${reason}`);
  }
}

/** A limit a call would have crossed. */
export interface ReachedLimit {
  readonly kind: LimitKind;
  /** The room's key or the agent's name (the bridge: 'bridge'). */
  readonly name: string;
  /** Nano-dollars a day. */
  readonly limit: number;
  /** The day (YYYY-MM-DD in SPEND_TZ) and when the next one starts (ms since the epoch). */
  readonly day: string;
  readonly until: number;
}

/** A model call that was not made: it did not fit in a spending limit. */
export class SpendLimitError extends RoundtableError {
  constructor(readonly reached: ReachedLimit) {
    super('spend', `over its spending limit (${describeLimit(reached)})`);
  }
}

export function describeLimit(reached: Pick<ReachedLimit, 'kind' | 'name' | 'limit'>): string {
  const whose =
    reached.kind === 'bridge' ? "the bridge's" : reached.kind === 'room' ? "this room's" : `@${reached.name}'s`;
  return `${whose} ${formatUsd(reached.limit)} a day`;
}
