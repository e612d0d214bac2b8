/**
 * Rule 4.7, private chat requests: each is the state of its pair's room (`private:a+b`), decided here. A request waits
 * for its recipient's answer until it expires (one pending request between two agents at a time); its recipient
 * accepts or declines it; its sender is told once how it ended when it did not go through. Every change is written
 * with the decision (`chat-request`), so the store's chat requests, read across pairs (an agent's briefing, look),
 * are this room's decisions and nothing else.
 */
import { type Draft, same } from './draft.js';
import type { Action, ChatRequest } from './events.js';
import { pairKey } from './guards.js';
import type { RoomState } from './state.js';

/** How long a chat request waits for its answer when the setup does not say (CHAT_REQUEST_TIMEOUT_S's default). */
export const CHAT_REQUEST_TIMEOUT_MS = 10 * 60_000;

type ChatAction = Extract<Action, { kind: 'chat-request' | 'chat-response' | 'chat-told' }>;

/** The room's chat requests, oldest first (none in older states). */
export function chatsOf(state: RoomState): readonly ChatRequest[] {
  return state.chats ?? [];
}

/** Whether chat request `id` was accepted here (an older state kept only the accepted ids). */
export function acceptedChat(state: RoomState, id: number): boolean {
  return chatsOf(state).some((r) => r.id === id && r.status === 'accepted') || (state.accepted ?? []).includes(id);
}

/** A chat action arriving in the pair's room: decided, and its result given back to the acting turn. */
export function chatAction(d: Draft, a: ChatAction): void {
  const pair = d.setup.pair; // a pair room's only
  if (!pair) {
    refuse(d, a.call, 'private chat requests are made in a private chat room only');
    return;
  }
  takeIn(d, pair, a.known ?? []);
  expireDue(d);
  switch (a.kind) {
    case 'chat-request':
      request(d, pair, a);
      return;
    case 'chat-response':
      respond(d, a);
      return;
    case 'chat-told':
      for (const r of chatsOf(d.state)) {
        if (a.ids.includes(r.id) && !r.senderTold && (r.status === 'expired' || r.status === 'declined')) {
          change(d, { ...r, senderTold: true });
        }
      }
      d.effect({ type: 'action-result', call: a.call, result: { kind: 'done', text: '' } });
      return;
  }
}

/** A chat request's expiry is due (its timer): it expires unless it was answered meanwhile. */
export function chatExpired(d: Draft, id: number): void {
  const request = chatsOf(d.state).find((r) => r.id === id);
  if (request?.status === 'pending') change(d, { ...request, status: 'expired' });
}

/** After a restart: the expiries of the requests still pending are set again. */
export function rearmChats(d: Draft): void {
  for (const r of chatsOf(d.state)) {
    if (r.status === 'pending') d.effect({ type: 'chat-timer', at: r.expiresAt, chat: r.id });
  }
}

/** A new request from one agent of the pair to the other: refused while one between them is pending. */
function request(d: Draft, pair: readonly [string, string], a: Extract<ChatAction, { kind: 'chat-request' }>): void {
  const from = d.agent(a.from);
  const to = d.agent(a.to);
  if (!from || !to || same(from, to) || pairKey(from, to) !== pairKey(pair[0], pair[1])) {
    refuse(d, a.call, `@${a.to} is not the other agent of this private chat`);
    return;
  }
  const pending = chatsOf(d.state).find((r) => r.status === 'pending');
  if (pending) {
    refuse(d, a.call, `request #${pending.id} between you and @${to} is already pending`);
    return;
  }
  if (chatsOf(d.state).some((r) => r.id === a.id)) {
    refuse(d, a.call, `chat request #${a.id} exists already`);
    return;
  }
  const made: ChatRequest = {
    id: a.id,
    from,
    to,
    reason: a.reason || '(no reason given)',
    status: 'pending',
    createdAt: d.now,
    expiresAt: d.now + (d.setup.chatRequestTimeoutMs ?? CHAT_REQUEST_TIMEOUT_MS),
    senderTold: false,
  };
  change(d, made);
  d.effect({ type: 'chat-timer', at: made.expiresAt, chat: made.id });
  d.set({
    queue: [
      ...d.state.queue,
      {
        id: d.state.nextAsk,
        agent: to,
        reason: 'chat-request',
        about: 0,
        author: from,
        questions: [],
        requests: [],
        audience: null,
        fromAgent: false,
        attempt: 0,
        chat: { id: made.id, from, reason: made.reason },
      },
    ],
    nextAsk: d.state.nextAsk + 1,
    // A new request starts the pair's private chat afresh.
    control: { holder: 'agents', count: 0 },
  });
  d.effect({ type: 'action-result', call: a.call, result: { kind: 'chat', request: made } });
}

/** The recipient's answer: refused when the request is not addressed to it, or no longer pending. */
function respond(d: Draft, a: Extract<ChatAction, { kind: 'chat-response' }>): void {
  const request = chatsOf(d.state).find((r) => r.id === a.id);
  if (!request || !same(request.to, a.agent)) {
    refuse(d, a.call, `there is no chat request #${a.id} addressed to you`);
    return;
  }
  if (request.status !== 'pending') {
    refuse(d, a.call, `chat request #${request.id} is ${request.status}`);
    return;
  }
  const answered: ChatRequest = { ...request, status: a.accept ? 'accepted' : 'declined' };
  change(d, answered);
  d.effect({ type: 'action-result', call: a.call, result: { kind: 'chat', request: answered } });
}

/**
 * The pair's requests the store holds that this room does not (kept before the pair room held its requests) are
 * taken in as they are stored; what the room holds wins.
 */
function takeIn(d: Draft, pair: readonly [string, string], known: readonly ChatRequest[]): void {
  const held = chatsOf(d.state);
  const key = pairKey(pair[0], pair[1]);
  const fresh = known.filter((r) => pairKey(r.from, r.to) === key && !held.some((h) => h.id === r.id));
  if (fresh.length > 0) d.set({ chats: [...held, ...fresh].sort((x, y) => x.id - y.id) });
}

/** Requests whose time is up expire now, whether or not their timer has come yet (it may come late). */
function expireDue(d: Draft): void {
  for (const r of chatsOf(d.state)) {
    if (r.status === 'pending' && r.expiresAt <= d.now) change(d, { ...r, status: 'expired' });
  }
}

/** The request as it is now: in the state, and written with the decision. */
function change(d: Draft, request: ChatRequest): void {
  const held = chatsOf(d.state);
  const chats = held.some((r) => r.id === request.id)
    ? held.map((r) => (r.id === request.id ? request : r))
    : [...held, request];
  d.set({ chats });
  d.write({ type: 'chat-request', request });
}

function refuse(d: Draft, call: string, reason: string): void {
  d.effect({ type: 'action-result', call, result: { kind: 'invalid', reason } });
}
