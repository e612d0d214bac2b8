/**
 * `decide` emits every write of its decision itself: the records of why it decided (kept for the console's "why"),
 * the notes it sends to other rooms (with ids from the block it is given) and the removal of a note it took. The shell
 * commits `writes` as they are and adds none of its own.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { Write } from '../../src/room/effects.js';
import type { RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';
import { roomSetup } from './room-setup.js';

const setup: RoomSetup = roomSetup();

const human = (text: string): RoomEvent => ({
  type: 'message',
  now: 5000,
  message: { author: 'alice', authorId: 'u1', kind: 'human', text, platformIds: ['m1'], at: 4000 },
});

const of = <T extends Write['type']>(writes: readonly Write[], type: T) =>
  writes.filter((write): write is Extract<Write, { type: T }> => write.type === type);

describe('the writes a decision emits', () => {
  it('keeps each record of why beside the message it is about, stamped with the decision time', () => {
    const decision = decide(setup, EMPTY_STATE, human('@pm hello'), { nextRequestId: 1, idBlock: 'b' });
    const [message] = of(decision.writes, 'message');
    expect(of(decision.writes, 'decision')).toEqual([
      {
        type: 'decision',
        seq: message?.message.seq,
        at: 5000,
        record: { kind: 'routed', seq: message?.message.seq, author: 'alice', woken: ['pm:addressed'] },
      },
    ]);
    // The same records still go to the shell as effects (the log, the metrics).
    expect(decision.effects.filter((effect) => effect.type === 'record')).toHaveLength(1);
  });

  it('writes each note it sends with an id from its block, and the effect carries the same id', () => {
    const state: RoomState = {
      ...EMPTY_STATE,
      away: [
        { id: 7, target: 'test:other', parent: null },
        { id: 8, target: 'test:third', parent: null },
      ],
    };
    const command = { id: 'c1', name: 'reset' as const, args: '', user: 'op', isOperator: true };
    const decision = decide(setup, state, { type: 'command', now: 9, command }, { nextRequestId: 1, idBlock: 'blk' });
    const notes = of(decision.writes, 'note');
    expect(notes.map((note) => [note.id, note.room])).toEqual([
      ['blk.0', 'test:other'],
      ['blk.1', 'test:third'],
    ]);
    const sent = decision.effects.filter((effect) => effect.type === 'note');
    expect(sent).toEqual(notes.map(({ id, room, note }) => ({ type: 'note', id, room, note })));
  });

  it('removes the stored copy of a note it takes, in the same decision', () => {
    const event: RoomEvent = { type: 'note', now: 3, id: 'n-1', note: { kind: 'cancel-requests', ids: [99] } };
    const decision = decide(setup, EMPTY_STATE, event, { nextRequestId: 1, idBlock: 'b' });
    expect(of(decision.writes, 'note-done')).toEqual([{ type: 'note-done', id: 'n-1' }]);
  });
});
