/**
 * Rules 6 and 10: hand-backs and dropped-question lines; and what a started ask answers (rule 2.4).
 */
import { answersHumans, droppedLine, joinDrops } from './asks.js';
import { type Draft, same } from './draft.js';
import type { TurnOrder } from './effects.js';
import { closeRequests } from './requests.js';
import { situationOf } from './situation.js';
import type { Dropped, Turn } from './state.js';

/** Tells the room whose questions were dropped — at once, or in one line when a catch-up is done (rule 10.2). */
export function tellDropped(d: Draft, drops: readonly Dropped[], why: string): void {
  if (drops.length === 0) return;
  d.record({ kind: 'dropped', drops });
  if (d.state.holding) d.set({ heldDrops: joinDrops(d.state.heldDrops, drops) });
  else d.line(droppedLine(drops, why));
}

/** Asks kept by a hand-back: humans' questions asked after `since` (the turn that handed back began then). */
const keptAfter = (since: number) => (ask: Turn) =>
  answersHumans(ask) &&
  ask.about > since &&
  (ask.reason === 'addressed' || ask.reason === 'awaiting' || ask.reason === 'direct');

/**
 * Rule 6.1: control goes to the humans. The reply being written is not posted; the queue keeps only the questions
 * humans asked after the turn that handed back began (`since`); the room's requests close (5.6); the line is posted.
 */
export function handBack(d: Draft, reason: string, text: string | undefined, since: number): void {
  d.record({ kind: 'hand-back', reason });
  const current = d.state.current;
  const from = current?.ask.startedAt ?? since;
  if (d.state.batch) d.effect({ type: 'stop', ask: d.state.batch.id, reason: 'control' });
  d.set({
    control: { holder: 'humans', count: 0, reason },
    current: current && current.post === undefined ? { ...current, stop: 'control' } : current,
    queue: d.state.queue.filter(keptAfter(from)),
    batch: null,
  });
  closeRequests(d);
  if (text) d.line(text);
}

const unique = (names: readonly string[]) =>
  names.filter((name, i) => names.findIndex((other) => same(other, name)) === i);

/** The requesters of the requests an ask answers (from the room's open requests). */
function requestersOf(d: Draft, ask: Turn): string[] {
  return ask.requests.flatMap((id) => {
    const request = d.state.requests.find((r) => r.id === id);
    return request ? [request.requester] : [];
  });
}

/**
 * The requester of each request an ask answers: from the room's open requests, else as the ask's earlier start
 * found it (a request that settled while the turn was being written, before a restart took it again).
 */
function requestersAnswered(d: Draft, ask: Turn): Array<{ id: number; requester: string }> {
  return ask.requests.flatMap((id) => {
    const requester =
      d.state.requests.find((r) => r.id === id)?.requester ?? ask.requesters?.find((r) => r.id === id)?.requester;
    return requester === undefined ? [] : [{ id, requester }];
  });
}

/** Rule 2.4: the people an ask's reply answers (naming them is part of the answer). */
export function peopleOf(d: Draft, ask: Turn): string[] {
  const requesters = () => requestersAnswered(d, ask).map((r) => r.requester);
  const spoke = d.state.agentPosts.filter((p) => p.seq > ask.about).map((p) => p.author);
  switch (ask.reason) {
    case 'always':
    case 'mentioned':
      return unique([ask.author, ...spoke]);
    case 'request':
      return unique(requesters());
    case 'resume':
      return unique([...(ask.resume?.opener.people ?? []), ...requesters()]);
    case 'chat-request':
      return ask.chat ? [ask.chat.from] : [];
    default:
      return unique([...ask.questions.map((q) => q.human), ...requesters(), ...spoke]);
  }
}

/** Who asked for the turn, as its prompt names them. */
function askersOf(d: Draft, ask: Turn): string[] {
  return unique([...ask.questions.map((q) => q.human), ...requestersOf(d, ask)]);
}

/**
 * The turn to run for a started ask, with why it runs: taken again when a restart cut an earlier start (its journal
 * answers).
 */
export function order(d: Draft, ask: Turn): TurnOrder {
  return {
    ask,
    situation: situationOf(ask, askersOf(d, ask), d.setup.kind),
    again: ask.attempt > 1 || ask.parked === true,
  };
}

/** An ask as it starts: when, whom its reply answers, one more attempt. */
export function started(d: Draft, ask: Turn): Turn {
  // Field by field (see asks.ts `make`): the copy of every started ask.
  return {
    id: ask.id,
    agent: ask.agent,
    reason: ask.reason,
    about: ask.about,
    author: ask.author,
    questions: ask.questions,
    requests: ask.requests,
    audience: ask.audience,
    fromAgent: ask.fromAgent,
    resume: ask.resume,
    chat: ask.chat,
    root: ask.root,
    trace: ask.trace,
    held: ask.held,
    startedAt: d.state.seq,
    people: peopleOf(d, ask),
    requesters: ask.requests.length > 0 ? requestersAnswered(d, ask) : undefined,
    attempt: ask.attempt + 1,
    parked: ask.parked,
  };
}
