/** The store's port for spending limits: a day's spend per scope, the holds of calls under way, operators' limits. */

/** What a call holds in one scope (`bridge`, `room:<key>`, `agent:<name>`), and that scope's limit. */
export interface SpendScope {
  readonly scope: string;
  /** Nano-dollars a day; null: no limit (the spend is still counted). */
  readonly limit: number | null;
  /** Nano-dollars to hold in this scope. */
  readonly amount: number;
}

export type ReserveResult =
  | { readonly ok: true }
  /** The first scope the hold does not fit in: what it has spent or holds, and its limit (nano-dollars). */
  | { readonly ok: false; readonly scope: string; readonly used: number; readonly limit: number };

export interface SpendRow {
  readonly scope: string;
  /** Nano-dollars settled on the day. */
  readonly spent: number;
  /** Nano-dollars held by calls under way. */
  readonly reserved: number;
}

/**
 * Whose holds are abandoned when bridges share the store: those of every replica not seen within `liveMs` (the
 * database's clock) or of none recorded, and `replica`'s own when `own` (its previous run's, at its start) — never
 * those of a live replica's calls under way.
 */
export interface AbandonedHolds {
  readonly replica: string;
  readonly liveMs: number;
  readonly own: boolean;
}

/** A day's spend per scope, held before each model call and settled after it (money in nano-dollars). */
export interface SpendPort {
  /**
   * Holds each scope's amount, atomically, when every one fits under its limit (spent + reserved + amount <=
   * limit); otherwise holds nothing.
   */
  reserve(hold: {
    readonly id: string;
    readonly day: string;
    readonly scopes: readonly SpendScope[];
    readonly at: number;
    /** REPLICA_ID of the bridge making the call (whose liveness decides when the hold is abandoned). */
    readonly replica?: string | undefined;
  }): Promise<ReserveResult>;
  /** Replaces a hold with what the call cost in each scope (null: not known, so the whole hold is spent). */
  settle(id: string, costs: ReadonlyMap<string, number> | null): Promise<void>;
  /**
   * Holds left by a bridge that stopped mid-call become spent (their usage is not known); how many there were. Without
   * `abandoned` every hold is (one bridge, at its start); with it, only those of replicas not live.
   */
  settleAbandoned(abandoned?: AbandonedHolds): Promise<number>;
  /** Every scope's spend on `day`. */
  day(day: string): Promise<SpendRow[]>;
  /** Limits an operator set (`/budget`), which win over the configuration: nano-dollars, or null for none. */
  limits(): Promise<ReadonlyMap<string, number | null>>;
  setLimit(scope: string, limit: number | null): Promise<void>;
  /** Forgets an operator's limit: the configuration's applies again. */
  clearLimit(scope: string): Promise<void>;
}
