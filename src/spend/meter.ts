/**
 * Spending limits: before every model call the bridge holds the call's worst case (its counted input and its output
 * cap, at the agent's prices) in the day's spend of the bridge, the room and the agent, in one atomic store call; a
 * call that does not fit is not made. After the call what the server reported replaces the hold; a call whose usage
 * is not known keeps its whole hold as spent. So the spend never passes a limit.
 */
import { randomUUID } from 'node:crypto';
import type { AgentConfig, Price, Settings } from '../config/index.js';
import { splitUsage } from '../llm/batch.js';
import type { EmbedMeter } from '../llm/embeddings.js';
import { SUMMARY_OUTPUT_TOKENS } from '../llm/summaries.js';
import { countRequest, tokenCounter } from '../llm/tokens.js';
import type { CallHold, CallMeter, LlmRequest } from '../llm/types.js';
import type { LlmUsage } from '../llm/usage.js';
import type { Logger } from '../log.js';
import { metrics } from '../metrics.js';
import type { SpendPort, SpendScope } from '../store/port.js';
import type { ToolSpend } from '../tools/tool.js';
import { dayOf, nextDayStart } from './day.js';
import { formatUsd, NANO_PER_USD, tokensCost, usdToNano } from './money.js';
import { Settles } from './settles.js';

// biome-ignore format: one line
export { describeLimit, type LimitKind, type ReachedLimit, type SpendGate, SpendLimitError, SpendNotApproved } from './limits.js';

import { kindOf, type LimitKind, type SpendGate, SpendLimitError, SpendNotApproved, scopeOf } from './limits.js';

/** What usage cost at a price: uncached input, cached input, output. */
export function costOf(usage: LlmUsage, price: Price): number {
  const cached = Math.min(usage.cached, usage.input);
  return (
    tokensCost(usage.input - cached, price.input) +
    tokensCost(cached, price.cached) +
    tokensCost(usage.output, price.output)
  );
}

/** The hold counts the input this much larger, plus a few tokens (chat templates differ from server to server). */
export const INPUT_MARGIN = 1.05;
export const INPUT_SLACK = 32;

/** One payer of a call: an agent with its price, its output cap and its share of the call's input (0..1). */
interface Payer {
  readonly scope: string;
  readonly price: Price;
  readonly cap: number;
  readonly share: number;
}

export interface SpendMeterDeps {
  readonly store: SpendPort;
  readonly settings: Pick<
    Settings,
    | 'SPEND_LIMIT_USD_DAY'
    | 'ROOM_SPEND_LIMIT_USD_DAY'
    | 'SPEND_TZ'
    | 'EMBEDDINGS_PRICE'
    | 'EMBEDDINGS_MODEL'
    | 'SUMMARY_PRICE'
  > &
    /** How long a call may take (a hold lasts no longer): the longest a call waits for others' holds to settle. */
    Partial<Pick<Settings, 'LLM_TIMEOUT_S'>>;
  readonly agents: readonly AgentConfig[];
  readonly clock: () => number;
  readonly log: Logger;
  /**
   * With bridges sharing the store: this bridge's REPLICA_ID (each hold records it) and the lease's length (a replica
   * not seen for that long is not live, and its holds are abandoned).
   */
  readonly replicas?: { readonly replica: string; readonly liveMs: number } | undefined;
}

export interface LimitLine {
  readonly kind: LimitKind;
  readonly name: string;
  /** Nano-dollars; null: none. */
  readonly limit: number | null;
  readonly spent: number;
  readonly reserved: number;
  /** Set by an operator (`/budget`), not the configuration. */
  readonly override: boolean;
}

/** Without LLM_TIMEOUT_S, the longest a call waits for the holds of calls under way. */
const HOLD_WAIT_S = 120;

export class SpendMeter {
  /** Calls waiting for a hold to settle: woken by every settle of this bridge. */
  private readonly settles = new Settles();

  constructor(private readonly deps: SpendMeterDeps) {}

  /** True when some limit may stop a call (otherwise spend is only counted). */
  get limited(): boolean {
    const { settings, agents } = this.deps;
    return (
      settings.SPEND_LIMIT_USD_DAY !== undefined ||
      settings.ROOM_SPEND_LIMIT_USD_DAY !== undefined ||
      agents.some((a) => a.spendLimitUsdDay !== undefined)
    );
  }

  /**
   * Holds a stopped bridge left become spent (at start). With replicas, only those of this replica's previous run and
   * of replicas not live: another replica's calls under way keep theirs.
   */
  async recover(): Promise<void> {
    const { replicas } = this.deps;
    const count = await this.deps.store.settleAbandoned(replicas ? { ...replicas, own: true } : undefined);
    if (count > 0) this.deps.log.info({ count }, 'calls cut by a stop counted as spent in full');
  }

  /** With replicas: the holds of replicas that died (not seen within a lease) become spent; never this one's. */
  async settleDead(): Promise<void> {
    const { replicas } = this.deps;
    if (!replicas) return;
    const count = await this.deps.store.settleAbandoned({ ...replicas, own: false });
    if (count > 0) this.deps.log.info({ count }, 'calls cut by a replica that died counted as spent in full');
  }

  /** The meter of one agent's calls in one room; none for an agent without a price (nothing can be counted). */
  forCall(agent: AgentConfig, room: string, gate?: SpendGate): CallMeter | undefined {
    const price = agent.price;
    if (!price) return undefined;
    return this.meter(
      room,
      [{ scope: scopeOf('agent', agent.name), price, cap: agent.maxOutputTokens, share: 1 }],
      gate,
    );
  }

  /** The meter of a batched call: each agent pays its share of the input (weights) and its own output cap. */
  forBatch(members: ReadonlyArray<{ agent: AgentConfig; weight: number }>, room: string): CallMeter | undefined {
    if (members.some((m) => !m.agent.price)) return undefined;
    const total = members.reduce((sum, m) => sum + Math.max(0, m.weight), 0) || 1;
    return this.meter(
      room,
      members.map(({ agent, weight }) => ({
        scope: scopeOf('agent', agent.name),
        price: agent.price as Price,
        cap: agent.maxOutputTokens,
        share: Math.max(0, weight) / total,
      })),
    );
  }

  /** A priced tool's calls by an agent in a room: each call's price held against the limits before it is made. */
  forTool(agent: string, room: string): ToolSpend {
    return {
      hold: async (nano, signal) => {
        const scopes = (await this.scopes(room, [scopeOf('agent', agent)])).map((s) => ({ ...s, amount: nano }));
        const id = await this.hold(scopes, { signal });
        return { settle: () => this.settle(id, this.costs(scopes, nano)), release: () => this.settle(id, new Map()) };
      },
    };
  }

  /** The meter of a room's summary calls (SUMMARY_PRICE, counted against the bridge and the room); none unpriced. */
  forSummaries(room: string): CallMeter | undefined {
    const price = this.deps.settings.SUMMARY_PRICE;
    if (!price) return undefined;
    return this.meter(room, [{ scope: scopeOf('room', room), price, cap: SUMMARY_OUTPUT_TOKENS, share: 1 }]);
  }

  /** The meter of embeddings for a room (the bridge's price, counted against the bridge and the room). */
  forEmbeddings(room: string | undefined, model: string): EmbedMeter | undefined {
    const usdPerMillion = this.deps.settings.EMBEDDINGS_PRICE;
    if (usdPerMillion === undefined) return undefined;
    const counter = tokenCounter(model);
    return {
      reserve: async (texts) => {
        const amount = tokensCost(
          texts.reduce((sum, text) => sum + counter.count(text), 0),
          usdPerMillion,
        );
        const scopes = await this.scopes(room, []);
        // Embeddings never wait for money held: the worker tries again later, recall goes without.
        const id = await this.hold(
          scopes.map((s) => ({ ...s, amount })),
          false,
        );
        return {
          settle: (tokens) =>
            this.settle(id, tokens === undefined ? null : this.costs(scopes, tokensCost(tokens, usdPerMillion))),
          release: () => this.settle(id, new Map()),
        };
      },
    };
  }

  /** Every limit that applies here, with the day's spend (the bridge, the room, then each agent). */
  async lines(room: string | undefined): Promise<LimitLine[]> {
    const { store, agents } = this.deps;
    const day = dayOf(this.deps.clock(), this.deps.settings.SPEND_TZ);
    const [rows, overrides] = await Promise.all([store.day(day), store.limits()]);
    const used = new Map(rows.map((row) => [row.scope, row]));
    const line = (kind: LimitKind, name: string): LimitLine => {
      const scope = scopeOf(kind, name);
      const row = used.get(scope);
      return {
        kind,
        name,
        limit: this.limitOf(scope, overrides),
        spent: row?.spent ?? 0,
        reserved: row?.reserved ?? 0,
        override: overrides.has(scope),
      };
    };
    return [
      line('bridge', 'bridge'),
      ...(room ? [line('room', room)] : []),
      ...agents.map((agent) => line('agent', agent.name)),
    ];
  }

  /** Today's spend of every scope that spent or has a limit, in US dollars (for /metrics). */
  async snapshot(): Promise<Array<{ scope: string; spentUsd: number; limitUsd: number | null }>> {
    const { store, agents } = this.deps;
    const day = dayOf(this.deps.clock(), this.deps.settings.SPEND_TZ);
    const [rows, overrides] = await Promise.all([store.day(day), store.limits()]);
    const scopes = new Set([
      'bridge',
      ...rows.map((row) => row.scope),
      ...agents.map((agent) => scopeOf('agent', agent.name)),
      ...overrides.keys(),
    ]);
    return [...scopes].map((scope) => {
      const row = rows.find((r) => r.scope === scope);
      const limit = this.limitOf(scope, overrides);
      return {
        scope,
        spentUsd: ((row?.spent ?? 0) + (row?.reserved ?? 0)) / NANO_PER_USD,
        limitUsd: limit === null ? null : limit / NANO_PER_USD,
      };
    });
  }

  /** `/budget`: an operator's limit (USD a day, or null for none); `undefined` goes back to the configuration. */
  async setLimit(kind: LimitKind, name: string, usd: number | null | undefined): Promise<void> {
    const scope = scopeOf(kind, name);
    if (usd === undefined) await this.deps.store.clearLimit(scope);
    else await this.deps.store.setLimit(scope, usd === null ? null : usdToNano(usd));
  }

  /** The configured limit of a scope, unless an operator set one (nano-dollars; null: none). */
  private limitOf(scope: string, overrides: ReadonlyMap<string, number | null>): number | null {
    if (overrides.has(scope)) return overrides.get(scope) ?? null;
    const { settings, agents } = this.deps;
    const { kind, name } = kindOf(scope);
    const usd =
      kind === 'bridge'
        ? settings.SPEND_LIMIT_USD_DAY
        : kind === 'room'
          ? settings.ROOM_SPEND_LIMIT_USD_DAY
          : agents.find((a) => a.name === name)?.spendLimitUsdDay;
    return usd === undefined ? null : usdToNano(usd);
  }

  /** The bridge's, the room's and these agents' scopes with their limits (amounts filled in by the caller). */
  private async scopes(room: string | undefined, agentScopes: readonly string[]): Promise<SpendScope[]> {
    const overrides = await this.deps.store.limits();
    const scope = (name: string): SpendScope => ({ scope: name, limit: this.limitOf(name, overrides), amount: 0 });
    return [scope('bridge'), ...(room ? [scope(scopeOf('room', room))] : []), ...agentScopes.map(scope)];
  }

  private meter(room: string, payers: readonly Payer[], gate?: SpendGate): CallMeter {
    // A call's retries are one call: approved once, not asked again.
    const approved = new WeakSet<LlmRequest>();
    return {
      reserve: async (request: LlmRequest): Promise<CallHold> => {
        const counter = tokenCounter(request.model);
        const counted =
          countRequest(counter, request.messages, request.tools ?? []) +
          (request.responseFormat ? counter.count(JSON.stringify(request.responseFormat)) : 0);
        // Servers render a request in their own template: a margin keeps their count under the hold.
        const input = Math.ceil(counted * INPUT_MARGIN) + INPUT_SLACK;
        // Each payer's worst case: its share of the input at its input price, its whole cap at its output price.
        const worst = payers.map(
          (p) => tokensCost(Math.ceil(input * p.share), p.price.input) + tokensCost(p.cap, p.price.output),
        );
        const total = worst.reduce((sum, amount) => sum + amount, 0);
        const scopes = await this.scopes(
          room,
          payers.map((p) => p.scope).filter((scope) => scope !== scopeOf('room', room)),
        );
        const held = scopes.map((s) => ({
          ...s,
          amount: worst[payers.findIndex((p) => p.scope === s.scope)] ?? total,
        }));
        if (gate?.over && total > gate.over.nano && !approved.has(request)) {
          const cost = `its worst case is ${formatUsd(total)}, over ${formatUsd(gate.over.nano)} a call`;
          if (gate.over.mode === 'deny') throw new SpendNotApproved(cost);
          const answer = await gate.ask({ worst: total }, request.signal);
          if (!answer.approved) throw new SpendNotApproved(answer.reason);
          approved.add(request);
        }
        const id = await this.holdOrAsk(held, request, gate, total, approved);
        return {
          settle: async (usage) => {
            if (!usage) return this.settle(id, null);
            const shares = splitUsage(
              usage,
              payers.map((p) => ({ input: p.share, output: p.cap })),
            );
            const costs = payers.map((p, i) => costOf(shares[i] ?? { input: 0, cached: 0, output: 0 }, p.price));
            const sum = costs.reduce((a, b) => a + b, 0);
            const byScope = new Map(scopes.map((s) => [s.scope, sum]));
            for (const [i, p] of payers.entries()) byScope.set(p.scope, costs[i] ?? 0);
            const held = total;
            if (sum > held) {
              this.deps.log.warn(
                { room, cost: sum, held },
                'a call cost more than its hold (its usage outgrew the count)',
              );
            }
            return this.settle(id, byScope);
          },
          release: () => this.settle(id, new Map()),
        };
      },
    };
  }

  /** Every scope at the same cost (embeddings: one payer). */
  private costs(scopes: readonly SpendScope[], cost: number): Map<string, number> {
    return new Map(scopes.map((s) => [s.scope, cost]));
  }

  /**
   * Holds the amounts or throws the limit the first scope that cannot take its amount has. A scope whose spend
   * leaves room for the amount, refused only because of what calls under way hold, is not reached: the call waits
   * for those holds to settle (a call lasts at most LLM_TIMEOUT_S) and tries again.
   */
  private async hold(
    scopes: readonly SpendScope[],
    wait: { readonly signal?: AbortSignal | undefined } | false,
  ): Promise<string> {
    const tz = this.deps.settings.SPEND_TZ;
    const signal = wait ? wait.signal : undefined;
    const waitMs = wait ? (this.deps.settings.LLM_TIMEOUT_S ?? HOLD_WAIT_S) * 1000 : 0;
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const id = randomUUID();
      const now = this.deps.clock();
      const day = dayOf(now, tz);
      const result = await this.deps.store.reserve({ id, day, scopes, at: now, replica: this.deps.replicas?.replica });
      if (result.ok) return id;
      const row = (await this.deps.store.day(day)).find((r) => r.scope === result.scope);
      const amount = scopes.find((s) => s.scope === result.scope)?.amount ?? 0;
      const heldOnly = row !== undefined && row.spent + amount <= result.limit;
      if (!heldOnly || !wait || Date.now() - started >= waitMs) {
        const { kind, name } = kindOf(result.scope);
        metrics.spendStopped.inc({ limit: kind });
        throw new SpendLimitError({ kind, name, limit: result.limit, day, until: nextDayStart(now, tz) });
      }
      // Held money settles when its calls end; money already free is tried for again at once, once.
      if (row.reserved > 0 || attempt > 0) await this.settles.next(signal);
    }
  }

  /**
   * Holds the call's amounts; over a limit with SPEND_AT_LIMIT=ask, an operator's approval lets this one call
   * through (held without the limits, so counted), else the limit's error.
   */
  private async holdOrAsk(
    held: readonly SpendScope[],
    request: LlmRequest,
    gate: SpendGate | undefined,
    total: number,
    approved: WeakSet<LlmRequest>,
  ): Promise<string> {
    try {
      return await this.hold(held, { signal: request.signal });
    } catch (error) {
      if (!(error instanceof SpendLimitError) || !gate?.atLimit) throw error;
      if (!approved.has(request)) {
        const answer = await gate.ask({ worst: total, reached: error.reached }, request.signal);
        if (!answer.approved) throw error;
        approved.add(request);
      }
      this.deps.log.info({ limit: error.reached }, 'a model call over a spending limit was approved');
      return this.hold(
        held.map((s) => ({ ...s, limit: null })),
        false,
      );
    }
  }

  /** Settling never fails a call: a store error is logged (the hold stays, and is spent at the next start). */
  private async settle(id: string, costs: ReadonlyMap<string, number> | null): Promise<void> {
    try {
      await this.deps.store.settle(id, costs);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'could not settle a model call against the spending limits');
    }
    // Calls waiting for money held try again.
    this.settles.wake();
  }
}
