/**
 * The model's rule 17, approvals: a turn's tool call held as a card of its room, answered by the turn's root (the
 * human it acts for, by id) or an operator, expiring as a denial, denied all at once by /pass and /reset, taken by
 * the turn when it ends, and found again by the turn taken again after a restart.
 */
import { type Card, type Room, rootOf, same } from './model-room.js';
import type { Rules } from './model-rules.js';
import { APPROVAL_TIMEOUT_MS } from './script.js';

/** Who gives an /approve or /deny: their name, whether their id is the person's own (not a namesake's), operator. */
export interface Approver {
  readonly name: string;
  readonly ownId: boolean;
  readonly operator: boolean;
}

function result(r: Rules, room: Room, call: Pick<Card, 'agent' | 'tool' | 'input'>, approved: boolean, why: string) {
  const { agent, tool, input } = call;
  r.out.push({ kind: 'approval-result', room: room.key, agent, tool, input, approved, reason: why });
}

function record(r: Rules, room: Room, card: Card, status: string, by?: string | null): void {
  r.out.push({ kind: 'approval-record', room: room.key, id: card.id, status, ...(by ? { by } : {}) });
}

/** 17.1: the turn being written holds a call: a card, or the answer it has already. */
export function askApproval(r: Rules, room: Room, tool: string, input: string, tooLong: boolean): void {
  const turn = room.turn;
  if (!turn) return; // nothing writes a turn here: nobody holds a call
  const agent = turn.ask.agent;
  if (turn.stop) {
    result(r, room, { agent, tool, input }, false, 'the turn is over');
    return;
  }
  if (tooLong) {
    r.line(room, { kind: 'card-too-long', agent, tool });
    result(r, room, { agent, tool, input }, false, 'the call is too long to show on an approval card; make it shorter');
    return;
  }
  // 17.4: the same call of the same turn (taken again after a restart) finds its card.
  const found = room.cards.find((c) => c.ask === turn.ask.id && c.tool === tool && c.input === input);
  if (found?.status === 'denied') {
    r.coverage.add('a call denied while its turn was parked, made again');
    room.cards = room.cards.filter((c) => c !== found);
    result(r, room, found, false, found.reason ?? 'it was denied');
    return;
  }
  if (found?.status === 'approved') {
    r.coverage.add('an approved call made again by the turn taken again');
    room.cards = room.cards.filter((c) => c !== found);
    result(r, room, found, true, 'approved');
    return;
  }
  if (found) {
    r.coverage.add('a waiting call made again by the turn taken again');
    return;
  }
  room.madeCards += 1;
  r.coverage.add('an approval card');
  const root = rootOf(turn.ask);
  if (turn.ask.reason === 'request' && root) r.coverage.add('a card for a human carried through a request');
  const card: Card = {
    id: `A${room.madeCards}`,
    ask: turn.ask.id,
    agent,
    tool,
    input,
    root,
    expiresAt: r.now + APPROVAL_TIMEOUT_MS,
    order: r.cardsMade++,
    status: 'waiting',
  };
  room.cards.push(card);
  record(r, room, card, 'asked', root);
  r.line(room, { kind: 'card', id: card.id, agent, tool, input, root });
}

/** 17.2, 17.3: `/approve <id>` or `/deny <id>`; its answer. */
export function answerCard(r: Rules, room: Room, name: 'approve' | 'deny', args: string, by: Approver): void {
  const answer = (text: string) => r.out.push({ kind: 'approval-answer', room: room.key, text });
  const id = args
    .trim()
    .replace(/^\[|\]$/g, '')
    .toUpperCase();
  const waiting = room.cards.filter((c) => c.status === 'waiting');
  if (!id) {
    answer(
      waiting.length === 0
        ? 'No approval is waiting here.'
        : `Waiting here: ${waiting.map((c) => `${c.id} (@${c.agent}, ${c.tool})`).join(', ')}. Use /${name} <id>.`,
    );
    return;
  }
  const card = waiting.find((c) => c.id === id);
  if (!card) {
    answer(`No approval ${id} is waiting here.`);
    return;
  }
  const isRoot = card.root !== null && by.ownId && same(card.root, by.name);
  if (!by.operator && !isRoot) {
    r.coverage.add(same(card.root ?? '', by.name) ? 'a namesake refused a card' : 'someone else refused a card');
    answer(
      card.root
        ? `Only @${card.root} (who asked) or an operator can answer ${card.id}.`
        : `Only an operator can answer ${card.id}.`,
    );
    return;
  }
  r.coverage.add(isRoot ? 'a card answered by its root' : 'a card answered by an operator');
  if (name === 'approve') {
    card.status = 'approved';
    r.line(room, { kind: 'card-answer', id: card.id, status: 'approved', by: by.name });
    record(r, room, card, 'approved', by.name);
    result(r, room, card, true, `approved by ${by.name}`);
    answer(`${card.id} approved.`);
    return;
  }
  denied(room, card, `${by.name} denied it`);
  r.line(room, { kind: 'card-answer', id: card.id, status: 'denied', by: by.name });
  record(r, room, card, 'denied', by.name);
  result(r, room, card, false, `${by.name} denied it`);
  answer(`${card.id} denied.`);
}

/** 17.5: a card denied while its turn waits in the queue stays, denied, for the turn taken again; else it goes. */
function denied(room: Room, card: Card, reason: string): void {
  if (room.turn?.ask.id === card.ask) room.cards = room.cards.filter((c) => c !== card);
  else {
    card.status = 'denied';
    card.reason = reason;
  }
}

/** 17.3: the earliest deadline of a card still waiting, in any room: a denial. */
export function expireCard(r: Rules): void {
  const cards = [...r.rooms.values()].flatMap((room) =>
    room.cards.filter((c) => c.status === 'waiting').map((card) => ({ room, card })),
  );
  const next = cards.sort((a, b) => a.card.expiresAt - b.card.expiresAt || a.card.order - b.card.order)[0];
  if (!next) return;
  const { room, card } = next;
  r.now = Math.max(r.now, card.expiresAt);
  r.coverage.add('a card that expired');
  r.inRoom(room.key, () => {
    denied(room, card, 'nobody approved it in time');
    r.line(room, { kind: 'card-answer', id: card.id, status: 'expired' });
    record(r, room, card, 'expired');
    result(r, room, card, false, 'nobody approved it in time');
  });
}

/** 17.3: /pass and /reset refuse every card of the room still waiting (the approved ones go too). */
export function denyCards(r: Rules, room: Room, command: 'pass' | 'reset'): void {
  const why = `/${command} stopped the turn`;
  for (const card of room.cards) {
    if (card.status !== 'waiting') continue;
    r.coverage.add(`a card denied by /${command}`);
    result(r, room, card, false, why);
    record(r, room, card, 'denied', why);
  }
  room.cards = [];
}

/**
 * 17.4: a turn that ends takes its cards with it — answered, stopped, cut by restarts, or no longer waiting to be
 * taken again (a newer message from its human replaced it).
 */
export function endCards(room: Room): void {
  if (room.cards.length === 0) return;
  room.cards = room.cards.filter((c) => room.turn?.ask.id === c.ask || room.queue.some((a) => a.id === c.ask));
}
