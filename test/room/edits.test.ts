import { describe, expect, it } from 'vitest';
import { withAddressed } from '../../src/room/addressed.js';
import { decide } from '../../src/room/decide.js';
import { newlyAddressed } from '../../src/room/edits.js';
import type { AuthorKind, RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup } from '../../src/room/state.js';

const MINUTE = 60_000;
const check = { originalAt: 1_000_000, editedAt: 1_000_000 + MINUTE, windowMs: 5 * MINUTE };

describe('newlyAddressed', () => {
  it('names the agents an edit adds, in its order, and not those addressed before', () => {
    expect(newlyAddressed({ ...check, addressing: ['code', 'data', 'reviewer'], addressedBefore: ['Data'] })).toEqual([
      'code',
      'reviewer',
    ]);
  });

  it('adds no one when the edit only repeats or removes mentions', () => {
    expect(newlyAddressed({ ...check, addressing: ['code'], addressedBefore: ['code', 'data'] })).toEqual([]);
    expect(newlyAddressed({ ...check, addressing: [], addressedBefore: ['code'] })).toEqual([]);
  });

  it('wakes no one once the window after the original has passed, or with no window', () => {
    const late = { ...check, editedAt: check.originalAt + 5 * MINUTE + 1 };
    expect(newlyAddressed({ ...late, addressing: ['code'], addressedBefore: [] })).toEqual([]);
    const onTime = { ...check, editedAt: check.originalAt + 5 * MINUTE };
    expect(newlyAddressed({ ...onTime, addressing: ['code'], addressedBefore: [] })).toEqual(['code']);
    expect(newlyAddressed({ ...check, windowMs: 0, addressing: ['code'], addressedBefore: [] })).toEqual([]);
  });

  it('names each agent once', () => {
    expect(newlyAddressed({ ...check, addressing: ['code', 'CODE'], addressedBefore: [] })).toEqual(['code']);
  });
});

describe('withAddressed', () => {
  const known = ['data', 'code'];

  it('adds the agents the platform says a message addresses after its mentions, in configured spelling', () => {
    expect(withAddressed(['data'], ['CODE'], known)).toEqual(['data', 'code']);
  });

  it('ignores unknown names, duplicates and the author', () => {
    expect(withAddressed(['data'], ['data', 'nobody', 'code'], known, 'code')).toEqual(['data']);
    expect(withAddressed(['code'], undefined, known)).toEqual(['code']);
  });
});

describe('an edit as the room decides it (rule 13)', () => {
  const setup: RoomSetup = {
    key: 'test:room',
    agents: [
      { name: 'code', activation: 'mention' },
      { name: 'data', activation: 'mention' },
    ],
    turnLimit: 20,
    kind: 'room',
    privacy: 'off',
    requestTimeoutMs: 600_000,
    editWindowMs: 5 * MINUTE,
    maxToolRounds: 8,
    batching: false,
  };
  const editBy = (kind: AuthorKind): RoomEvent => ({
    type: 'edit',
    now: check.editedAt,
    edit: {
      author: kind === 'human' ? 'alice' : 'code',
      authorId: 'u1',
      kind,
      text: 'Done. @data please check the numbers',
      platformIds: ['m1:edit:1'],
      originalAt: check.originalAt,
      at: check.editedAt,
      addressedBefore: [],
    },
  });
  const asked = (kind: AuthorKind) =>
    decide(setup, EMPTY_STATE, editBy(kind), { nextRequestId: 1 }).effects.flatMap((e) =>
      e.type === 'ask' ? e.turns.map((t) => t.ask.agent) : [],
    );

  it("asks the agents a human's edit newly names", () => {
    expect(asked('human')).toEqual(['data']);
  });

  it("asks nobody for an agent's or the bridge's edit (a streamed reply growing is never a request)", () => {
    expect(asked('agent')).toEqual([]);
    expect(asked('system')).toEqual([]);
    const quiet = decide(setup, EMPTY_STATE, editBy('agent'), { nextRequestId: 1 });
    expect(quiet.writes).toEqual([]);
    expect(quiet.effects).toEqual([]);
  });
});
