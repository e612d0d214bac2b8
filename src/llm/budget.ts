import type { Allocations } from '../config/index.js';
import { RoundtableError } from '../errors.js';
import type { TokenCounter } from './tokens.js';

/**
 * Of the rooms share, the part for what changes every turn (the situation, retrieved older messages, the budget
 * status); the room's history gets the rest. A fixed split keeps the history's share, and so its cut point, the
 * same from one turn to the next.
 */
export const TURN_SHARE = 0.25;
/** Below this, an agent's budget has no useful room left once its fixed parts are in. */
export const MIN_FREE_TOKENS = 256;

/** An agent's context budget, in tokens as counted. */
export interface BudgetPlan {
  /** `context_tokens`: what the model can take, question and answer together. */
  readonly contextTokens: number;
  /** Kept free for the answer. */
  readonly reserve: number;
  /** What every request carries whole, outside the allocations: the bridge's rules, the tool schemas, the card. */
  readonly fixed: number;
  readonly knowledge: number;
  readonly recentActions: number;
  /** The room's history (part of the rooms share). */
  readonly history: number;
  /** The turn's note: situation, retrieved messages, budget status (the rest of the rooms share). */
  readonly turn: number;
}

/** An agent's fixed parts leave no room in its budget. */
export class BudgetError extends RoundtableError {
  constructor(message: string) {
    super('budget', message);
  }
}

/** Splits what the fixed parts and the answer reserve leave among seed 004's allocations. */
export function planBudget(input: {
  readonly agent: string;
  readonly contextTokens: number;
  readonly reserve: number;
  readonly fixed: number;
  readonly allocations: Allocations;
}): BudgetPlan {
  const free = input.contextTokens - input.reserve - input.fixed;
  if (free < MIN_FREE_TOKENS) {
    throw new BudgetError(
      `@${input.agent}'s prompt, rules and tool schemas take ${input.fixed} tokens of its ${input.contextTokens}-token ` +
        `context (${input.reserve} kept for the answer): raise context_tokens or shorten the prompt`,
    );
  }
  const share = (percent: number) => Math.floor((free * percent) / 100);
  const rooms = share(input.allocations.rooms);
  const turn = Math.floor(rooms * TURN_SHARE);
  return {
    contextTokens: input.contextTokens,
    reserve: input.reserve,
    fixed: input.fixed,
    knowledge: share(input.allocations.knowledge),
    recentActions: share(input.allocations.recentActions),
    history: rooms - turn,
    turn,
  };
}

/** The most a request may count: the budget less the answer's reserve. */
export function requestLimit(plan: BudgetPlan): number {
  return plan.contextTokens - plan.reserve;
}

/** Like the sandbox's output rule: about five sevenths from the start, two sevenths from the end. */
const HEAD_SHARE = 5 / 7;

/** What stands in place of text cut out of a tool result or a call's arguments. */
export function cutMarker(characters: number): string {
  return `[… ${characters} characters cut …]`;
}

// Never split a surrogate pair: an emoji cut in half is not text.
function headOf(text: string, length: number): string {
  const end = Math.max(0, length);
  const code = text.charCodeAt(end - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? end - 1 : end);
}

function tailOf(text: string, length: number): string {
  if (length <= 0) return '';
  const start = text.length - length;
  const code = text.charCodeAt(start);
  return text.slice(code >= 0xdc00 && code <= 0xdfff ? start + 1 : start);
}

/**
 * `text` within `maxTokens`: unchanged when it fits, else its start and its end around a visible
 * `[… N characters cut …]` note. Deterministic, so the same message is clipped the same way on every call.
 */
export function clipText(text: string, maxTokens: number, counter: TokenCounter): string {
  const total = counter.count(text);
  if (total <= maxTokens) return text;
  const limit = Math.max(0, maxTokens);
  // Characters per token of this very text, less a little for the note: the first guess usually fits.
  let keep = Math.floor((text.length * limit) / total) - 40;
  for (let attempt = 0; attempt < 12 && keep > 0; attempt++) {
    const head = headOf(text, Math.ceil(keep * HEAD_SHARE));
    const tail = tailOf(text, keep - Math.ceil(keep * HEAD_SHARE));
    const clipped = `${head}\n${cutMarker(text.length - head.length - tail.length)}\n${tail}`;
    if (counter.count(clipped) <= limit) return clipped;
    keep = Math.floor(keep * 0.8);
  }
  return cutMarker(text.length);
}

/** What each part of a request takes, for the budget status. */
export interface BudgetUse {
  readonly total: number;
  readonly knowledge: number;
  readonly recentActions: number;
  readonly history: number;
  /** Messages of the room that the budget or HISTORY_LIMIT left out. */
  readonly historyLeftOut: number;
  /** Messages or entries shortened or left out to fit. */
  readonly clipped: boolean;
}

const n = (value: number) => value.toLocaleString('en-US');

/** seed 004's budget status, as the agent reads it at the end of its context (short: it is sent every turn). */
export function budgetStatus(plan: BudgetPlan, use: BudgetUse): string {
  const limit = requestLimit(plan);
  const percent = Math.round((use.total / limit) * 100);
  const notes: string[] = [];
  if (use.historyLeftOut > 0) notes.push(`the ${use.historyLeftOut} oldest room messages are not shown`);
  if (use.clipped) notes.push('some long items are shortened');
  const status = percent >= 90 ? 'WARNING - approaching the budget limit' : 'OK';
  return (
    `${n(use.total)}/${n(limit)} tokens (${percent}%; ${n(plan.reserve)} more kept for your answer): ` +
    `knowledge ${n(use.knowledge)}/${n(plan.knowledge)}, recent actions ${n(use.recentActions)}/${n(plan.recentActions)}, ` +
    `room history ${n(use.history)}/${n(plan.history)}. Status: ${status}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}.`
  );
}
