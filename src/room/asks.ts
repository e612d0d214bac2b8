/**
 * The room's queue of asks (rules 2.3, 4.4, 4.5, 5.1): adding an ask, merging humans' questions into one turn,
 * observers asked about the newest message only, a human's newer message replacing their older questions, and
 * the limit of questions waiting for one agent.
 */
import { waitsForCard } from './approvals.js';
import { type Draft, lower, same } from './draft.js';
import type { Dropped, Question, Reason, Turn } from './state.js';

/** At most this many humans' questions wait for one agent (rule 2.3). */
export const MAX_WAITING = 5;

export const isObserver = (ask: Pick<Turn, 'reason'>): boolean => ask.reason === 'always' || ask.reason === 'mentioned';
/** An ask that answers humans' questions (a DM, a mention, an answer the agent waited for). */
export const answersHumans = (ask: Pick<Turn, 'questions'>): boolean => ask.questions.length > 0;

/** Whether `agent` has an ask queued or being carried out. */
export function busy(d: Draft, agent: string): boolean {
  const current = d.state.current;
  if (current && same(current.ask.agent, agent)) return true;
  if (d.state.batch?.asks.some((a) => same(a.agent, agent))) return true;
  return d.state.queue.some((ask) => same(ask.agent, agent));
}

export interface NewTurn {
  readonly agent: string;
  readonly reason: Reason;
  readonly about: number;
  readonly author: string;
  readonly questions?: readonly Question[];
  readonly requests?: readonly number[];
  readonly audience: readonly string[] | null;
  readonly fromAgent: boolean;
  readonly held?: boolean | undefined;
  readonly resume?: Turn['resume'];
  readonly chat?: Turn['chat'];
  readonly root?: Turn['root'];
  readonly trace?: Turn['trace'];
}

function make(d: Draft, input: NewTurn): Turn {
  const ask: Turn = {
    id: d.state.nextAsk,
    agent: input.agent,
    reason: input.reason,
    about: input.about,
    author: input.author,
    questions: input.questions ?? [],
    requests: input.requests ?? [],
    audience: input.audience,
    fromAgent: input.fromAgent,
    // Every field, in one order, unset ones undefined: all asks share one shape (their copies stay fast).
    resume: input.resume,
    chat: input.chat,
    root: input.root,
    trace: input.trace,
    held: input.held ? true : undefined,
    startedAt: undefined,
    people: undefined,
    requesters: undefined,
    attempt: 0,
    parked: undefined,
  };
  d.set({ nextAsk: d.state.nextAsk + 1 });
  return ask;
}

/** Appends an ask at the end of the queue. */
export function enqueue(d: Draft, input: NewTurn): Turn {
  const ask = make(d, input);
  d.set({ queue: [...d.state.queue, ask] });
  return ask;
}

/** Two exchanges' audiences, answered by one turn: public if either is. */
function joinAudience(a: readonly string[] | null, b: readonly string[] | null): readonly string[] | null {
  if (a === null || b === null) return null;
  return [...a, ...b.filter((name) => !a.some((n) => same(n, name)))];
}

/**
 * A human's question for `agent` (rule 2.3): merged into the agent's queued ask that answers humans, if it has one
 * (one turn answers every asker; the ask is now about the newer message), otherwise a new ask at the end. At most
 * MAX_WAITING humans wait: the oldest question beyond is dropped (returned, for the line).
 */
export function askHuman(d: Draft, input: NewTurn & { readonly questions: readonly Question[] }): Dropped | undefined {
  const at = d.state.queue.findIndex(
    (ask) => same(ask.agent, input.agent) && answersHumans(ask) && !waitsForCard(d, ask.id),
  );
  if (at < 0) {
    enqueue(d, input);
    return undefined;
  }
  const queued = d.state.queue[at] as Turn;
  let questions = [
    ...queued.questions.filter((q) => !input.questions.some((n) => same(n.human, q.human))),
    ...input.questions,
  ];
  let dropped: Dropped | undefined;
  if (questions.length > MAX_WAITING) {
    const cut = questions.slice(0, questions.length - MAX_WAITING);
    questions = questions.slice(-MAX_WAITING);
    dropped = { agent: queued.agent, humans: cut.map((q) => q.human) };
  }
  const merged: Turn = {
    ...queued,
    // Addressed by name wins over "answered the question you asked": it was asked for its action.
    reason: queued.reason === 'addressed' || input.reason === 'addressed' ? 'addressed' : input.reason,
    about: Math.max(queued.about, input.about),
    author: input.author,
    questions,
    audience: joinAudience(queued.audience, input.audience),
    held: (queued.held ?? false) && (input.held ?? false),
  };
  replaceAt(d, at, merged);
  return dropped;
}

/**
 * A request awaits `agent` here (rule 5.1): merged into its queued ask that answers humans, if any; otherwise a new
 * ask at the end. Its queued observer asks go: it is asked as a participant instead.
 */
export function askForRequest(d: Draft, input: NewTurn & { readonly requests: readonly number[] }): void {
  removeWhere(d, (ask) => same(ask.agent, input.agent) && isObserver(ask));
  const at = d.state.queue.findIndex(
    (ask) => same(ask.agent, input.agent) && answersHumans(ask) && !waitsForCard(d, ask.id),
  );
  if (at < 0) {
    enqueue(d, input);
    return;
  }
  const queued = d.state.queue[at] as Turn;
  replaceAt(d, at, {
    ...queued,
    requests: [...queued.requests, ...input.requests],
    about: Math.max(queued.about, input.about),
    audience: joinAudience(queued.audience, input.audience),
  });
}

function replaceAt(d: Draft, at: number, ask: Turn): void {
  const queue = [...d.state.queue];
  queue[at] = ask;
  d.set({ queue });
}

export function removeWhere(d: Draft, drop: (ask: Turn) => boolean): Turn[] {
  const removed = d.state.queue.filter(drop);
  if (removed.length > 0) d.set({ queue: d.state.queue.filter((ask) => !drop(ask)) });
  return removed;
}

/**
 * Rule 2.3, before a human's message adds its asks: that human's questions not yet started go (their newer message
 * replaces them), and so do observers and every ask an agent's message made. Other humans' questions, request
 * participants and resumes stay.
 */
export function makeRoomForHuman(d: Draft, human: string): void {
  const queue: Turn[] = [];
  for (const ask of d.state.queue) {
    if (isObserver(ask) || ask.fromAgent) continue;
    if (!answersHumans(ask)) {
      queue.push(ask);
      continue;
    }
    const questions = ask.questions.filter((q) => !same(q.human, human));
    if (questions.length === ask.questions.length) queue.push(ask);
    else if (questions.length > 0 || ask.requests.length > 0) queue.push({ ...ask, questions });
  }
  d.set({ queue });
}

/** The humans' questions in these asks, by agent (for the dropped-questions line). */
export function questionsOf(asks: readonly Turn[]): Dropped[] {
  const byAgent = new Map<string, { agent: string; humans: string[] }>();
  for (const ask of asks) {
    for (const q of ask.questions) {
      const entry = byAgent.get(lower(ask.agent)) ?? { agent: ask.agent, humans: [] };
      if (!entry.humans.some((h) => same(h, q.human))) entry.humans.push(q.human);
      byAgent.set(lower(ask.agent), entry);
    }
  }
  return [...byAgent.values()];
}

/** Rule 10.2: one line naming whose questions were dropped. */
export function droppedLine(drops: readonly Dropped[], why: string): string {
  const names = (list: readonly string[]) => {
    const tagged = list.map((n) => `@${n}`);
    return tagged.length <= 1 ? (tagged[0] ?? '') : `${tagged.slice(0, -1).join(', ')} and ${tagged.at(-1)}`;
  };
  const parts = drops.map((drop) => `@${drop.agent} will not answer ${names(drop.humans)}`);
  return `${why}: ${parts.join('; ')}. Ask again if it still matters.`;
}

/** Merges dropped questions by agent. */
export function joinDrops(a: readonly Dropped[], b: readonly Dropped[]): Dropped[] {
  const out = a.map((drop) => ({ agent: drop.agent, humans: [...drop.humans] }));
  for (const drop of b) {
    const entry = out.find((e) => same(e.agent, drop.agent));
    if (!entry) out.push({ agent: drop.agent, humans: [...drop.humans] });
    else for (const h of drop.humans) if (!entry.humans.some((n) => same(n, h))) entry.humans.push(h);
  }
  return out;
}
