import { describe, expect, it } from 'vitest';
import { withAddressed } from '../../src/room/addressed.js';
import { newlyAddressed } from '../../src/room/edits.js';

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
