/**
 * The record of how a message was routed names every agent of the room it did not wake, and why — activation,
 * privacy, the access policy — and carries the trace the shell opened for the message, which the asks it made keep
 * (in the state, so a turn taken again after a restart joins the same trace).
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { DecisionRecord } from '../../src/room/effects.js';
import type { Incoming, RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup } from '../../src/room/state.js';
import { roomSetup } from './room-setup.js';

const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

const setup: RoomSetup = roomSetup({
  agents: [
    { name: 'pm', activation: 'mention' },
    { name: 'code', activation: 'always' },
    { name: 'data', activation: 'mention' },
    { name: 'ops', activation: 'always' },
  ],
});

const human = (text: string, more: Partial<Incoming> = {}): RoomEvent => ({
  type: 'message',
  now: 5000,
  message: { author: 'alice', authorId: 'u1', kind: 'human', text, platformIds: ['m1'], at: 4000, ...more },
});

function routed(records: readonly DecisionRecord[]): Extract<DecisionRecord, { kind: 'routed' }> | undefined {
  return records.find((r): r is Extract<DecisionRecord, { kind: 'routed' }> => r.kind === 'routed');
}

const recordsOf = (event: RoomEvent, s: RoomSetup = setup) =>
  decide(s, EMPTY_STATE, event, { nextRequestId: 1, idBlock: 'b' }).effects.flatMap((e) =>
    e.type === 'record' ? [e.record] : [],
  );

describe('the routing record', () => {
  it('names who was woken in order and who was not, with why', () => {
    const record = routed(recordsOf(human('@pm can you look?', { mayWake: ['pm', 'code'], refused: 'user' })));
    expect(record?.woken).toEqual(['pm:addressed', 'code:always']);
    expect(record?.refused).toEqual({ agents: ['ops'], why: 'user' });
    expect(record?.skipped).toEqual([
      { agent: 'data', why: 'activation' },
      { agent: 'ops', why: 'access' },
    ]);
  });

  it('says privacy when an agent cannot see the message', () => {
    const record = routed(recordsOf(human('@pm only you'), { ...setup, privacy: 'mentions' }));
    expect(record?.woken).toEqual(['pm:addressed']);
    expect(record?.skipped).toContainEqual({ agent: 'code', why: 'privacy' });
  });

  it('keeps the message trace in the record and in every ask it made', () => {
    const decision = decide(setup, EMPTY_STATE, human('@pm hi', { trace: TRACE }), { nextRequestId: 1, idBlock: 'b' });
    const records = decision.effects.flatMap((e) => (e.type === 'record' ? [e.record] : []));
    expect(routed(records)?.trace).toBe(TRACE);
    const asks = [...decision.state.queue, ...(decision.state.current ? [decision.state.current.ask] : [])];
    expect(asks.length).toBeGreaterThan(0);
    for (const ask of asks) expect(ask.trace).toBe(TRACE);
  });

  it('records no trace when the shell traces nothing', () => {
    expect(routed(recordsOf(human('@pm hi')))).not.toHaveProperty('trace');
  });
});
