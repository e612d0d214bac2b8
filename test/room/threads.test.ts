import { describe, expect, it } from 'vitest';
import {
  addAnswer,
  closeForHandBack,
  dueForExpiry,
  isAwaitingAnswerFrom,
  pendingParticipants,
  resumeSummary,
  type Thread,
  threadAwaiting,
  threadsToCancel,
} from '../../src/room/threads.js';

const thread = (over: Partial<Thread> = {}): Thread => ({
  id: 1,
  requester: 'pm',
  originRoom: 'test:room',
  targetRoom: 'test:room',
  parentId: null,
  request: '@science @character_dev opinions?',
  awaited: [
    { name: 'science', kind: 'agent' },
    { name: 'character_dev', kind: 'agent' },
  ],
  answers: [],
  status: 'open',
  openedAt: 0,
  deadline: 600_000,
  ...over,
});

describe('request_reply threads', () => {
  it('completes only when every awaited participant has answered, in either order', () => {
    for (const order of [
      ['science', 'character_dev'],
      ['character_dev', 'science'],
    ]) {
      let t = thread();
      t = addAnswer(t, { participant: order[0] ?? '', text: 'first', passed: false, at: 1 });
      expect(t.status).toBe('open');
      expect(pendingParticipants(t).map((p) => p.name)).toEqual([order[1]]);
      t = addAnswer(t, { participant: order[1] ?? '', text: 'second', passed: false, at: 2 });
      expect(t.status).toBe('answered');
    }
  });

  it('counts a pass as an answer and notes it as a pass', () => {
    let t = addAnswer(thread(), { participant: 'science', text: '', passed: true, at: 1 });
    t = addAnswer(t, { participant: 'character_dev', text: 'She would never do that.', passed: false, at: 2 });
    expect(t.status).toBe('answered');
    expect(resumeSummary(t)).toBe(
      [
        'Everyone you asked in request #1 has answered.',
        'You asked: @science @character_dev opinions?',
        'Answers:',
        '- @science passed (nothing to add)',
        '- @character_dev: She would never do that.',
        'Continue from here: use these answers in your reply.',
      ].join('\n'),
    );
  });

  it('ignores a second answer from the same participant and answers from others', () => {
    const once = addAnswer(thread(), { participant: 'science', text: 'a', passed: false, at: 1 });
    expect(addAnswer(once, { participant: 'Science', text: 'b', passed: false, at: 2 })).toBe(once);
    expect(addAnswer(once, { participant: 'stranger', text: 'c', passed: false, at: 2 })).toBe(once);
  });

  it('lists who did not answer when the deadline passed', () => {
    const t = {
      ...addAnswer(thread(), { participant: 'science', text: 'ok', passed: false, at: 1 }),
      status: 'expired' as const,
    };
    expect(resumeSummary(t)).toMatch(/reached its deadline[\s\S]*- @science: ok[\s\S]*Did not answer: @character_dev/);
    expect(dueForExpiry([thread(), thread({ id: 2, deadline: 10 })], 100).map((x) => x.id)).toEqual([2]);
  });

  it('finds the innermost open thread awaiting someone in a room', () => {
    const outer = thread({ id: 1, awaited: [{ name: 'lead', kind: 'agent' }] });
    const inner = thread({ id: 2, requester: 'lead', awaited: [{ name: 'science', kind: 'agent' }], parentId: 1 });
    const elsewhere = thread({ id: 3, targetRoom: 'test:other', awaited: [{ name: 'science', kind: 'agent' }] });
    const threads = [outer, inner, elsewhere, thread({ id: 4 })];
    expect(threadAwaiting(threads, 'test:room', 'science')?.id).toBe(4);
    expect(threadAwaiting([outer, inner, elsewhere], 'test:room', 'science')?.id).toBe(2);
    expect(threadAwaiting(threads, 'test:room', 'lead')?.id).toBe(1);
    expect(threadAwaiting(threads, 'test:room', 'pm')).toBeUndefined();
    expect(isAwaitingAnswerFrom({ ...outer, status: 'cancelled' }, 'lead')).toBe(false);
  });

  it('on a hand-back, cancels what the room started and expires what another room waits for', () => {
    const own = thread({ id: 1 });
    const fromElsewhere = thread({ id: 2, originRoom: 'test:other' });
    const { cancel, expire } = closeForHandBack([own, fromElsewhere], 'test:room');
    expect(cancel.map((t) => [t.id, t.status])).toEqual([[1, 'cancelled']]);
    expect(expire.map((t) => [t.id, t.status])).toEqual([[2, 'expired']]);
  });

  it("cancels a room's threads and those nested in them", () => {
    const outer = thread({ id: 1 });
    const nested = thread({ id: 2, parentId: 1, targetRoom: 'test:elsewhere', originRoom: 'test:elsewhere' });
    const unrelated = thread({ id: 3, targetRoom: 'test:other', originRoom: 'test:other' });
    const closed = thread({ id: 4, status: 'closed' });
    expect(threadsToCancel([outer, nested, unrelated, closed], 'test:room').map((t) => t.id)).toEqual([1, 2]);
  });
});
