/**
 * Rule 16: a human the access policy does not let in is history, never a request. Their message is stored, wakes no
 * agent, answers no agent's question, takes no turn and no control from anyone, and they are told why once per room.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { Effect } from '../../src/room/effects.js';
import type { Incoming, RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';
import { roomSetup } from './room-setup.js';

const setup: RoomSetup = roomSetup({
  agents: [
    { name: 'code', activation: 'mention' },
    { name: 'pm', activation: 'always' },
  ],
});
const context = { nextRequestId: 1, idBlock: 'b' };

let at = 1000;
function said(author: string, text: string, patch: Partial<Incoming> = {}): RoomEvent {
  at += 1000;
  return {
    type: 'message',
    now: at,
    message: {
      author,
      authorId: `id-${author}`,
      kind: 'human',
      text,
      platformIds: [`m${at}`],
      at,
      ...patch,
    },
  };
}

const outsider = { mayWake: [] as string[], refused: 'user' as const };

function run(state: RoomState, event: RoomEvent) {
  return decide(setup, state, event, context);
}
const asked = (effects: readonly Effect[]) =>
  effects.flatMap((e) => (e.type === 'ask' ? e.turns.map((t) => `${t.ask.agent}:${t.ask.reason}`) : []));
const told = (effects: readonly Effect[]) => effects.filter((e) => e.type === 'tell');

describe('access (rule 16)', () => {
  it("stores an outsider's message as history and wakes nobody, not even an always agent", () => {
    const d = run(EMPTY_STATE, said('mallory', '@code post the roadmap in #announcements', outsider));
    expect(d.writes.some((w) => w.type === 'message')).toBe(true);
    expect(asked(d.effects)).toEqual([]);
    expect(d.state.queue).toEqual([]);
    expect(d.state.current).toBeNull();
  });

  it('tells the outsider why once per room, naming the agents they tried, and records the refusal', () => {
    const first = run(EMPTY_STATE, said('mallory', '@code hello', outsider));
    expect(told(first.effects)).toEqual([
      { type: 'tell', user: { id: 'id-mallory', name: 'mallory' }, text: expect.stringContaining('code, pm take') },
    ]);
    const record = first.effects.find((e) => e.type === 'record' && e.record.kind === 'routed');
    expect(record).toMatchObject({ record: { woken: [], refused: { agents: ['code', 'pm'], why: 'user' } } });
    const second = run(first.state, said('mallory', '@code hello again', outsider));
    expect(told(second.effects)).toEqual([]);
    const third = run(second.state, said('eve', '@code hi', outsider));
    expect(told(third.effects)).toHaveLength(1);
  });

  it('says which channel rule refused them', () => {
    const d = run(EMPTY_STATE, said('bob', '@code hi', { mayWake: [], refused: 'channel' }));
    expect(told(d.effects)[0]).toMatchObject({ text: expect.stringContaining('do not answer in this channel') });
  });

  it("keeps an agent loop the humans stopped stopped: an outsider's message gives control back to no one", () => {
    const state: RoomState = { ...EMPTY_STATE, control: { holder: 'humans', count: 0, reason: '/pass' } };
    const d = run(state, said('mallory', '@code go on', outsider));
    expect(d.state.control).toEqual(state.control);
  });

  it('resets no turn count (an outsider cannot keep a loop going past the turn limit)', () => {
    const state: RoomState = { ...EMPTY_STATE, control: { holder: 'agents', count: 17 } };
    expect(run(state, said('mallory', 'keep going', outsider)).state.control.count).toBe(17);
    expect(run(state, said('alice', 'keep going')).state.control.count).toBe(0);
  });

  it("answers no agent's question put to someone else, and is not remembered as a person to ask", () => {
    const state: RoomState = { ...EMPTY_STATE, awaiting: { code: ['mallory'] } };
    const d = run(state, said('mallory', 'yes, do it', outsider));
    expect(asked(d.effects)).toEqual([]);
    expect(d.state.awaiting).toEqual({ code: ['mallory'] });
    expect(d.state.humans).toEqual([]);
  });

  it("does not push the agents' own queued work aside", () => {
    const queued = run(EMPTY_STATE, said('alice', 'hello'));
    expect(queued.state.current?.ask.agent).toBe('pm');
    const d = run(queued.state, said('mallory', 'stop that', outsider));
    expect(d.state.current).toEqual(queued.state.current);
    expect(d.effects.filter((e) => e.type === 'stop')).toEqual([]);
  });

  it('wakes only the agents a partly allowed human may wake, and tells them about the others', () => {
    const d = run(EMPTY_STATE, said('carol', '@code @pm help', { mayWake: ['pm'], refused: 'user' }));
    expect(asked(d.effects)).toEqual(['pm:addressed']);
    expect(told(d.effects)[0]).toMatchObject({ text: expect.stringContaining('code takes requests only') });
  });

  it('lets everyone in when the shell says nothing of access', () => {
    const d = run(EMPTY_STATE, said('alice', '@code hi'));
    expect(asked(d.effects)).toEqual(['code:addressed']);
    expect(told(d.effects)).toEqual([]);
  });

  it('tells the person whose edit a closed channel refused that it is the channel, not them', () => {
    at += 1000;
    const edit: RoomEvent = {
      type: 'edit',
      now: at + 10,
      edit: {
        author: 'alice',
        authorId: 'id-alice',
        kind: 'human',
        text: 'hello @code',
        platformIds: ['e2'],
        originalAt: at,
        at: at + 10,
        addressedBefore: [],
        mayWake: [],
        refused: 'channel',
      },
    };
    const d = run(EMPTY_STATE, edit);
    expect(asked(d.effects)).toEqual([]);
    expect(told(d.effects)[0]).toMatchObject({ text: expect.stringContaining('does not answer in this channel') });
  });

  it("wakes no agent by an outsider's edit that newly mentions it", () => {
    const first = run(EMPTY_STATE, said('mallory', 'hello', outsider));
    const edit: RoomEvent = {
      type: 'edit',
      now: at + 10,
      edit: {
        author: 'mallory',
        authorId: 'id-mallory',
        kind: 'human',
        text: 'hello @code',
        platformIds: ['e1'],
        originalAt: at,
        at: at + 10,
        addressedBefore: [],
        mayWake: [],
      },
    };
    const d = run(first.state, edit);
    expect(asked(d.effects)).toEqual([]);
    expect(d.writes.some((w) => w.type === 'message')).toBe(false);
  });
});
