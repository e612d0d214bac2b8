/** Rule 9: a private chat request is the state of its pair's room, and that room's `decide` decides it. */
import { describe, expect, it } from 'vitest';
import { acceptedChat } from '../../src/room/chats.js';
import { decide } from '../../src/room/decide.js';
import type { ActionResult, Decision, Effect } from '../../src/room/effects.js';
import type { Action, ChatRequest, RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomState, readOlder } from '../../src/room/state.js';
import { roomSetup } from './room-setup.js';

const TTL = 60_000;
const pair = roomSetup({
  key: 'private:a+b',
  agents: [
    { name: 'a', activation: 'mention' },
    { name: 'B', activation: 'mention' },
  ],
  kind: 'pair',
  pair: ['a', 'B'],
  chatRequestTimeoutMs: TTL,
});

type Event = RoomEvent extends infer E ? (E extends RoomEvent ? Omit<E, 'now'> : never) : never;

function step(state: RoomState, event: Event, now = 1_000, setup = pair): Decision {
  return decide(setup, state, { ...event, now } as RoomEvent, { nextRequestId: 1 });
}

const request = (id: number, from = 'a', to = 'b', reason = 'numbers'): Extract<Action, { kind: 'chat-request' }> => ({
  kind: 'chat-request',
  call: `request-${id}`,
  id,
  from,
  to,
  reason,
});
const respond = (id: number, agent: string, accept: boolean): Extract<Action, { kind: 'chat-response' }> => ({
  kind: 'chat-response',
  call: `respond-${id}`,
  id,
  agent,
  accept,
});

function resultOf(d: Decision, call: string): ActionResult | undefined {
  const found = d.effects.find(
    (e): e is Extract<Effect, { type: 'action-result' }> => e.type === 'action-result' && e.call === call,
  );
  return found?.result;
}

const chatWrites = (d: Decision) =>
  d.writes.flatMap((w) => (w.type === 'chat-request' ? [{ id: w.request.id, status: w.request.status }] : []));

/** a asked b (request #5) at 1,000. */
function requested(): RoomState {
  return step(EMPTY_STATE, { type: 'action', action: request(5) }).state;
}

describe('a chat request, in its pair room', () => {
  it('is pending until its expiry, written with the decision; its recipient is asked; its sender gets it back', () => {
    const d = step(EMPTY_STATE, { type: 'action', action: request(5, 'A', 'b', '') });
    const made: ChatRequest = {
      id: 5,
      from: 'a',
      to: 'B',
      reason: '(no reason given)',
      status: 'pending',
      createdAt: 1_000,
      expiresAt: 1_000 + TTL,
      senderTold: false,
    };
    expect(d.state.chats).toEqual([made]);
    expect(d.writes).toContainEqual({ type: 'chat-request', request: made });
    expect(resultOf(d, 'request-5')).toEqual({ kind: 'chat', request: made });
    expect(d.effects).toContainEqual({ type: 'chat-timer', at: 1_000 + TTL, chat: 5 });
    const asked = d.effects.find((e): e is Extract<Effect, { type: 'ask' }> => e.type === 'ask');
    expect(asked?.turns[0]?.ask).toMatchObject({ agent: 'B', reason: 'chat-request', chat: { id: 5, from: 'a' } });
  });

  it('is refused while another between the two is pending, either way round, and nothing is written', () => {
    const d = step(requested(), { type: 'action', action: request(6, 'b', 'a') });
    expect(resultOf(d, 'request-6')).toEqual({
      kind: 'invalid',
      reason: 'request #5 between you and @a is already pending',
    });
    expect(chatWrites(d)).toEqual([]);
    expect(d.state.chats?.map((r) => r.id)).toEqual([5]);
  });

  it('may be made again once the earlier one was answered', () => {
    const answered = step(requested(), { type: 'action', action: respond(5, 'b', false) }).state;
    const d = step(answered, { type: 'action', action: request(6) });
    expect(resultOf(d, 'request-6')).toMatchObject({ kind: 'chat', request: { id: 6, status: 'pending' } });
  });

  it('is made in a pair room only, between its two agents', () => {
    const room = step(EMPTY_STATE, { type: 'action', action: request(5) }, 1_000, roomSetup());
    expect(resultOf(room, 'request-5')).toMatchObject({ kind: 'invalid' });
    const other = step(EMPTY_STATE, { type: 'action', action: request(5, 'a', 'c') });
    expect(resultOf(other, 'request-5')).toMatchObject({ kind: 'invalid' });
    expect(other.state.chats ?? []).toEqual([]);
  });
});

describe('the answer to a chat request', () => {
  it('is taken from its recipient while pending: accepted, written, and given back', () => {
    const d = step(requested(), { type: 'action', action: respond(5, 'B', true) });
    expect(resultOf(d, 'respond-5')).toMatchObject({ kind: 'chat', request: { id: 5, status: 'accepted' } });
    expect(chatWrites(d)).toEqual([{ id: 5, status: 'accepted' }]);
    expect(acceptedChat(d.state, 5)).toBe(true);
  });

  it('is refused from anyone it is not addressed to, and for an unknown request', () => {
    const bySender = step(requested(), { type: 'action', action: respond(5, 'a', true) });
    expect(resultOf(bySender, 'respond-5')).toEqual({
      kind: 'invalid',
      reason: 'there is no chat request #5 addressed to you',
    });
    expect(chatWrites(bySender)).toEqual([]);
    const unknown = step(requested(), { type: 'action', action: respond(9, 'b', true) });
    expect(resultOf(unknown, 'respond-9')).toEqual({
      kind: 'invalid',
      reason: 'there is no chat request #9 addressed to you',
    });
  });

  it('is refused once the request is no longer pending', () => {
    const declined = step(requested(), { type: 'action', action: respond(5, 'b', false) }).state;
    const d = step(declined, { type: 'action', action: respond(5, 'b', true) });
    expect(resultOf(d, 'respond-5')).toEqual({ kind: 'invalid', reason: 'chat request #5 is declined' });
    expect(acceptedChat(d.state, 5)).toBe(false);
  });
});

describe("a chat request's expiry", () => {
  it('comes by its timer: the request expires (unless answered meanwhile) and is written', () => {
    const d = step(requested(), { type: 'chat-expired', chat: 5 }, 1_000 + TTL);
    expect(d.state.chats?.[0]?.status).toBe('expired');
    expect(chatWrites(d)).toEqual([{ id: 5, status: 'expired' }]);
    const accepted = step(requested(), { type: 'action', action: respond(5, 'b', true) }).state;
    expect(chatWrites(step(accepted, { type: 'chat-expired', chat: 5 }, 1_000 + TTL))).toEqual([]);
  });

  it('holds before its timer comes: an answer after it is refused, and a new request may be made', () => {
    const late = step(requested(), { type: 'action', action: respond(5, 'b', true) }, 1_000 + TTL);
    expect(resultOf(late, 'respond-5')).toEqual({ kind: 'invalid', reason: 'chat request #5 is expired' });
    expect(chatWrites(late)).toEqual([{ id: 5, status: 'expired' }]);
    const again = step(requested(), { type: 'action', action: request(6, 'b', 'a') }, 1_000 + TTL);
    expect(resultOf(again, 'request-6')).toMatchObject({ kind: 'chat', request: { id: 6 } });
  });

  it('is set again after a restart for every request still pending', () => {
    const d = step(requested(), { type: 'restart' }, 2_000);
    expect(d.effects).toContainEqual({ type: 'chat-timer', at: 1_000 + TTL, chat: 5 });
  });
});

describe("telling a request's sender how it ended", () => {
  it('marks an expired or declined request told, once, and leaves the others', () => {
    let state = step(requested(), { type: 'action', action: respond(5, 'b', false) }).state;
    state = step(state, { type: 'action', action: request(6) }).state;
    const told: Action = { kind: 'chat-told', call: 't', ids: [5, 6] };
    const d = step(state, { type: 'action', action: told });
    expect(d.writes).toEqual([
      { type: 'chat-request', request: expect.objectContaining({ id: 5, status: 'declined', senderTold: true }) },
    ]);
    expect(resultOf(d, 't')).toEqual({ kind: 'done', text: '' });
    expect(chatWrites(step(d.state, { type: 'action', action: told }))).toEqual([]);
  });
});

describe('requests the store kept before their pair room held them', () => {
  const stored: ChatRequest = {
    id: 3,
    from: 'b',
    to: 'a',
    reason: 'old',
    status: 'pending',
    createdAt: 0,
    expiresAt: 10_000,
    senderTold: false,
  };

  it('are taken in as stored, so they can be answered and block a second request', () => {
    const known = [stored, { ...stored, id: 4, from: 'a', to: 'c' }];
    const blocked = step(EMPTY_STATE, { type: 'action', action: { ...request(7), known } });
    expect(resultOf(blocked, 'request-7')).toMatchObject({
      reason: 'request #3 between you and @B is already pending',
    });
    expect(blocked.state.chats?.map((r) => r.id)).toEqual([3]);
    const answered = step(EMPTY_STATE, { type: 'action', action: { ...respond(3, 'a', true), known } });
    expect(resultOf(answered, 'respond-3')).toMatchObject({ kind: 'chat', request: { id: 3, status: 'accepted' } });
  });

  it('never override what the room holds', () => {
    const state = step(requested(), { type: 'action', action: respond(5, 'b', true) }).state;
    const known = [{ ...stored, id: 5, from: 'a', to: 'b', status: 'pending' as const }];
    const d = step(state, { type: 'action', action: { ...request(8), known } });
    expect(resultOf(d, 'request-8')).toMatchObject({ kind: 'chat', request: { id: 8 } });
    expect(acceptedChat(d.state, 5)).toBe(true);
  });
});

describe("the recipient's turn on a chat request", () => {
  /** b's chat-request turn runs; it answers (or not) and writes a reply. */
  function replied(answer: boolean | undefined, start = requested()): Decision {
    let state = start;
    if (answer !== undefined) state = step(state, { type: 'action', action: respond(5, 'b', answer) }).state;
    const ask = state.current?.ask.id ?? 0;
    return step(state, { type: 'answer', ask, outcome: { kind: 'reply', text: 'sure, what numbers?' } });
  }
  const posts = (d: Decision) => d.effects.filter((e) => e.type === 'post');

  it('shows its reply only when it accepted', () => {
    expect(posts(replied(true))).toHaveLength(1);
    expect(posts(replied(false))).toEqual([]);
    expect(posts(replied(undefined))).toEqual([]);
  });

  it('reads a state stored before the pair room held its requests: an empty accepted list says nothing', () => {
    const { chats: _, ...older } = EMPTY_STATE;
    expect(readOlder({ ...older, accepted: [] })).toEqual(EMPTY_STATE);
    expect(readOlder({ ...older, accepted: [] })).not.toHaveProperty('accepted');
    expect(readOlder({ ...older, accepted: [5] }).accepted).toEqual([5]);
  });

  it('reads an older state, which kept only the accepted ids', () => {
    const { chats: _, ...older } = requested();
    expect(posts(replied(undefined, { ...older, accepted: [5] }))).toHaveLength(1);
  });
});
