/**
 * The model's rooms: a whole transcript per room (messages and the bridge's marks: hand-backs, operator commands,
 * failures, catch-ups), and everything the rules need read back from it by scanning, not kept as counters.
 */

import { extractMentions } from '../../src/room/text/mentions.js';
import { asksQuestion, isNoProgress } from '../../src/room/text/replies.js';
import type { Reply, World } from './script.js';

export const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
export const has = (list: readonly string[], name: string): boolean => list.some((n) => same(n, name));
export const unique = (names: readonly string[]): string[] =>
  names.filter((n, i) => names.findIndex((m) => same(m, n)) === i);

export interface Message {
  readonly type: 'message';
  readonly seq: number;
  readonly author: string;
  readonly kind: 'human' | 'agent' | 'system';
  readonly text: string;
  readonly at: number;
  /** Agents it mentions (1.1). */
  readonly mentions: readonly string[];
  /** Whom it asks for a reply (1.2): agents and humans. */
  readonly asks: readonly string[];
  /** Who may see it (1.3); null: everyone. */
  readonly audience: readonly string[] | null;
  /** A stored edit (rule 13): it wakes, resets the count, but answers no one and ends no wait. */
  readonly edit: boolean;
  /**
   * Rule 16.3: by an outsider (a human the access policy lets wake no agent here): history only. It restarts no
   * count, gives control to no one, ends no wait and no failed round, and its author is no human the agents ask.
   */
  readonly outsider?: boolean;
}

/** What the bridge did in the room besides messages. */
export type Mark =
  /** Control changed: a hand-back or /pass (humans), /reset or a kept ask starting (agents). The count restarts. */
  | { readonly type: 'control'; readonly holder: 'agents' | 'humans'; readonly reason?: string }
  | { readonly type: 'failed'; readonly agent: string }
  /** /reset: failures and pair-guard lines forgotten. */
  | { readonly type: 'reset' }
  | { readonly type: 'told'; readonly pair: string }
  /** 16.4: the human was told why their messages wake nobody here (once per room, kept through /reset). */
  | { readonly type: 'refusal-told'; readonly human: string }
  | { readonly type: 'privacy'; readonly mode: 'off' | 'mentions' }
  | { readonly type: 'missed' }
  | { readonly type: 'caught-up' };

export type Entry = Message | Mark;

export type Reason = 'direct' | 'awaiting' | 'addressed' | 'request' | 'resume' | 'always' | 'mentioned';

export interface Ask {
  /** Which turn it is (its copies keep it): the cards of its calls are its own (rule 17). */
  readonly id: number;
  readonly agent: string;
  reason: Reason;
  about: number;
  author: string;
  questions: Array<{ readonly human: string; readonly seq: number }>;
  requests: number[];
  audience: readonly string[] | null;
  /** Made by an agent's message: a human's message removes it while queued. */
  readonly fromAgent: boolean;
  readonly resume?: number;
  /** How many times it was started before a restart cut it. */
  attempts?: number;
  /** Asked for on a human's behalf (a request, a resume): the human its chain started with (rule 17). */
  readonly root?: string | null;
}

/** Rule 17: a tool call of a turn held for approval, waiting, or approved and not yet run. */
export interface Card {
  readonly id: string;
  readonly ask: number;
  readonly agent: string;
  readonly tool: string;
  readonly input: string;
  /** Who may answer besides operators (a human, by id); null: operators only. */
  readonly root: string | null;
  readonly expiresAt: number;
  /** The order cards were made in (deadlines that fall together fire in it). */
  readonly order: number;
  /** Denied while its turn waited in the queue (17.5): the turn taken again reads the denial. */
  status: 'waiting' | 'approved' | 'denied';
  reason?: string;
}

export interface Turn {
  readonly ask: Ask;
  readonly startedAt: number;
  readonly people: readonly string[];
  attempts: number;
  stop?: 'operator' | 'deadline' | 'control';
}

/** A reply written and not yet on the platform: the platform keeps failing (a failure that passes). */
export interface Stalled {
  readonly turn: Turn;
  readonly text: string;
  readonly after: 'route' | 'world-pass' | 'round-limit';
}

export interface Said {
  readonly author: string;
  readonly at: number;
  /** The agents it and its edits addressed so far. */
  addressed: string[];
}

export interface Room {
  readonly key: string;
  /** The agent of a DM. */
  readonly dm?: string;
  readonly log: Entry[];
  queue: Ask[];
  turn: Turn | null;
  /** Its turn's reply, waiting for the platform (the room waits with it). */
  stalled: Stalled | null;
  /** Human messages as the platform has them (edits target these). */
  readonly said: Said[];
  /** Dropped questions told when the catch-up is done. */
  heldDrops: Array<{ agent: string; humans: string[] }>;
  /** Rule 17: the cards of the room's turns, and how many were ever made here. */
  cards: Card[];
  madeCards: number;
}

export const isObserver = (ask: Pick<Ask, 'reason'>): boolean => ask.reason === 'always' || ask.reason === 'mentioned';

export const messages = (room: Room): Message[] => room.log.filter((e): e is Message => e.type === 'message');
export const seqOf = (room: Room): number => messages(room).length;

/** Entries after the last one matching `stop`, newest first. */
function since(room: Room, stop: (e: Entry) => boolean): Entry[] {
  const out: Entry[] = [];
  for (let i = room.log.length - 1; i >= 0; i--) {
    const e = room.log[i] as Entry;
    if (stop(e)) break;
    out.push(e);
  }
  return out;
}

/** A human's message that counts as the humans speaking (an outsider's does not: 16.3). */
const isHuman = (e: Entry): e is Message => e.type === 'message' && e.kind === 'human' && e.outsider !== true;

/**
 * Rule 1.4 and 0: agent messages since the last human message, hand-back or operator command (/pass, /reset). Control
 * given back by a kept question (6.4) does not start the count again.
 */
export function countOf(room: Room): number {
  const restarts = (e: Entry) => isHuman(e) || (e.type === 'control' && e.holder === 'humans') || e.type === 'reset';
  return since(room, restarts).filter((e) => e.type === 'message' && e.kind === 'agent').length;
}

export function controlOf(room: Room): { holder: 'agents' | 'humans'; reason?: string } {
  for (let i = room.log.length - 1; i >= 0; i--) {
    const e = room.log[i] as Entry;
    if (isHuman(e)) return { holder: 'agents' };
    if (e.type === 'control') return e.reason ? { holder: e.holder, reason: e.reason } : { holder: e.holder };
  }
  return { holder: 'agents' };
}

/** Rule 3.4: failed since a human last spoke (or /reset). */
export function failedThisRound(room: Room, agent: string): boolean {
  return since(room, (e) => isHuman(e) || e.type === 'reset').some((e) => e.type === 'failed' && same(e.agent, agent));
}

export function told(room: Room, pair: string): boolean {
  return since(room, (e) => e.type === 'reset').some((e) => e.type === 'told' && e.pair === pair);
}

export function privacyOf(room: Room, world: World): 'off' | 'mentions' {
  for (let i = room.log.length - 1; i >= 0; i--) {
    const e = room.log[i] as Entry;
    if (e.type === 'privacy') return e.mode;
  }
  return world.privacy;
}

/** Rule 11: a catch-up fetched messages and is not done. */
export function holding(room: Room): boolean {
  return since(room, (e) => e.type === 'caught-up').some((e) => e.type === 'missed');
}

/** Rule 2.2.2: `agent` asked `human` in one of its messages here, and the human has not spoken since. */
export function awaits(room: Room, agent: string, human: string): boolean {
  for (let i = room.log.length - 1; i >= 0; i--) {
    const e = room.log[i] as Entry;
    if (e.type !== 'message') continue;
    if (e.kind === 'human' && !e.edit && e.outsider !== true && same(e.author, human)) return false;
    if (e.kind === 'agent' && same(e.author, agent) && has(e.asks, human)) return true;
  }
  return false;
}

/** A human spoke here after `seq` (edits included, outsiders not: 16.3). */
export function humanSince(room: Room, seq: number): boolean {
  return messages(room).some((m) => m.seq > seq && isHuman(m));
}

/** The agents that posted here after `seq`, in order. */
export function agentsSince(room: Room, seq: number): string[] {
  return unique(
    messages(room)
      .filter((m) => m.seq > seq && m.kind === 'agent')
      .map((m) => m.author),
  );
}

/** Rule 1.1 for a human: its `@` mentions, then the agents the platform says it addresses. */
export function humanMentions(world: World, text: string, addressed: readonly string[] = []): string[] {
  const names = world.agents.map((a) => a.name);
  const found = extractMentions(text, names);
  for (const name of addressed) {
    const agent = names.find((n) => same(n, name));
    if (agent && !has(found, agent)) found.push(agent);
  }
  return found;
}

/** Rule 1.3. */
export function audienceOf(
  mode: 'off' | 'mentions',
  author: string,
  mentions: readonly string[],
  exchange: readonly string[] | null,
): string[] | null {
  if (mode !== 'mentions') return null;
  if (exchange) return unique([...exchange, author, ...mentions]);
  return mentions.length > 0 ? unique([author, ...mentions]) : null;
}

export const canSee = (agent: string, message: Pick<Message, 'audience'>): boolean =>
  message.audience === null || has(message.audience, agent);

/** Rule 1.2 for an agent's reply: no progress, and whom it asks (its turn answers `answering`). */
export function readAgentReply(
  world: World,
  room: Room,
  author: string,
  text: string,
  answering: readonly string[],
): { noProgress: boolean; mentions: string[]; asks: string[] } {
  const agents = world.agents.map((a) => a.name);
  const mentions = extractMentions(text, agents, author);
  const previous = messages(room)
    .filter((m) => m.kind === 'agent' && same(m.author, author))
    .at(-1)?.text;
  const noProgress = isNoProgress(text, previous);
  if (noProgress) return { noProgress, mentions, asks: [] };
  const seen = unique(
    messages(room)
      .filter((m) => isHuman(m))
      .map((m) => m.author),
  ).filter((h) => !has(agents, h));
  const question = asksQuestion(text);
  const asks = [
    ...mentions.filter((a) => !has(answering, a)),
    ...extractMentions(text, seen, author).filter((h) => !has(answering, h) || question),
  ];
  return { noProgress, mentions, asks };
}

/** Rule 7.2: messages by one of two agents directly following one by the other, in the last 10 minutes. */
export function pairPaused(room: Room, a: string, b: string, now: number): boolean {
  let count = 0;
  let last: string | undefined;
  for (const m of messages(room)) {
    if (m.kind !== 'agent') continue;
    const pair = last !== undefined && !same(last, m.author) && [a, b].some((n) => same(n, last as string));
    if (pair && [a, b].some((n) => same(n, m.author)) && m.at > now - PAIR_WINDOW_MS) count++;
    last = m.author;
  }
  return count > PAIR_LIMIT;
}

export const PAIR_LIMIT = 30;
export const PAIR_WINDOW_MS = 10 * 60_000;
export const pairName = (a: string, b: string): string => [a.toLowerCase(), b.toLowerCase()].sort().join('+');

/** An agent's next reply from the oracle; an agent with none left passes. */
export function nextReply(
  oracle: Readonly<Record<string, readonly Reply[]>>,
  used: Map<string, number>,
  agent: string,
): Reply {
  const n = used.get(agent) ?? 0;
  used.set(agent, n + 1);
  return oracle[agent]?.[n] ?? { kind: 'text', text: '[pass]' };
}

let asks = 0;

export function newAsk(
  input: Partial<Omit<Ask, 'id'>> & Pick<Ask, 'agent' | 'reason' | 'about' | 'author' | 'audience'>,
): Ask {
  asks += 1;
  return { questions: [], requests: [], fromAgent: false, ...input, id: asks };
}

/**
 * Rule 17.2: the human a turn acts for — the one its chain started with (carried through requests), else the one
 * human whose questions it answers; null: nobody but operators.
 */
export function rootOf(ask: Ask): string | null {
  if (ask.root) return ask.root;
  const humans = unique(ask.questions.map((q) => q.human));
  return humans.length === 1 ? (humans[0] ?? null) : null;
}

/** Two exchanges' audiences, answered by one turn: public if either is. */
export function joinAudience(a: readonly string[] | null, b: readonly string[] | null): readonly string[] | null {
  return a === null || b === null ? null : unique([...a, ...b]);
}

/** 17.5: whether an ask's turn waits for a card (it is not taken until the card is answered). */
export function waitsForCard(room: Room, ask: number): boolean {
  return room.cards.some((c) => c.ask === ask && c.status === 'waiting');
}

/**
 * 17.5: the turn being written waits for a card and another question could run: the turn goes back to the head of
 * the queue (its start not counted) and the room takes the next question.
 */
export function parkWaiting(coverage: Set<string>, room: Room): void {
  const turn = room.turn;
  if (!turn || turn.stop || holding(room) || !waitsForCard(room, turn.ask.id)) return;
  if (!room.queue.some((a) => !waitsForCard(room, a.id))) return;
  coverage.add('a turn waiting for a card gave the room to another question');
  room.turn = null;
  room.queue.unshift({ ...turn.ask, attempts: turn.attempts - 1 });
}
