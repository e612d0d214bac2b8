/**
 * Rule 17: a tool call waiting for approval is room state. Only the human whose message started the turn or an
 * operator may answer its card; the answer binds that call; a card unanswered expires as a denial; /pass denies all;
 * a turn taken again after a restart that makes the same call finds its card.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import type { Effect } from '../../src/room/effects.js';
import type { ApprovalRequest, Command, RoomEvent } from '../../src/room/events.js';
import { EMPTY_STATE, type RoomSetup, type RoomState } from '../../src/room/state.js';
import { roomSetup } from './room-setup.js';

type Input = RoomEvent extends infer E ? (E extends unknown ? Omit<E, 'now'> : never) : never;

const setup: RoomSetup = roomSetup({ agents: [{ name: 'code', activation: 'mention' }], approvalTimeoutMs: 60_000 });
const context = { nextRequestId: 1, idBlock: 'b' };
let now = 10_000;
const run = (state: RoomState, event: Input) => {
  now += 1000;
  return decide(setup, state, { ...event, now } as RoomEvent, context);
};

function asked(by = 'alice'): RoomState {
  const d = run(EMPTY_STATE, {
    type: 'message',
    message: {
      author: by,
      authorId: `id-${by}`,
      kind: 'human',
      text: '@code clean the build',
      platformIds: ['m1'],
      at: now,
    },
  });
  expect(d.state.current?.ask.agent).toBe('code');
  return d.state;
}

const request = (state: RoomState, patch: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  ask: state.current?.ask.id ?? 0,
  agent: 'code',
  tool: 'bash',
  input: 'rm -rf build',
  token: 't1',
  ...patch,
});
const command = (name: 'approve' | 'deny', args: string, user: string, isOperator = false): Input => ({
  type: 'command',
  command: { id: 'c1', name, args, user, userId: `id-${user}`, isOperator } satisfies Command,
});
const results = (effects: readonly Effect[]) => effects.filter((e) => e.type === 'approval-result');
const answer = (effects: readonly Effect[]) => effects.find((e) => e.type === 'answer');
const lines = (d: { effects: readonly Effect[] }) =>
  d.effects.flatMap((e) => (e.type === 'post' && e.post.agent === null ? [e.post.text] : []));

describe('approvals (rule 17)', () => {
  it('posts a card showing exactly what runs, naming who may answer, with a deadline', () => {
    const state = asked();
    const d = run(state, { type: 'approval', request: request(state) });
    expect(lines(d)[0]).toBe(
      [
        'Approval needed [A1]: @code wants to run bash:',
        '```',
        'rm -rf build',
        '```',
        'Asked for by @alice: @alice or an operator may answer with /approve A1 or /deny A1 (it is denied in 1 minutes otherwise).',
      ].join('\n'),
    );
    expect(d.effects).toContainEqual({ type: 'approval-timer', at: now + 60_000, id: 'A1' });
    expect(d.effects).toContainEqual({
      type: 'record',
      record: { kind: 'approval', id: 'A1', agent: 'code', tool: 'bash', status: 'asked', by: 'alice' },
    });
    expect(results(d.effects)).toEqual([]);
  });

  it('marks the post of a card as a card (its buttons); the lines that answer it are plain lines', () => {
    const state = asked();
    const d = run(state, { type: 'approval', request: request(state) });
    const posts = d.effects.flatMap((e) => (e.type === 'post' ? [e.post] : []));
    expect(posts.map((p) => p.card)).toEqual([{ id: 'A1' }]);
    const approved = run(d.state, command('approve', 'A1', 'alice'));
    const after = approved.effects.flatMap((e) => (e.type === 'post' ? [e.post] : []));
    expect(after.map((p) => [p.text, p.card])).toEqual([['alice approved A1: @code runs it.', undefined]]);
  });

  it('lets the human who asked approve, and runs the call', () => {
    const state = run(asked(), { type: 'approval', request: request(asked()) }).state;
    const d = run(state, command('approve', 'a1', 'alice'));
    expect(results(d.effects)).toEqual([
      { type: 'approval-result', token: 't1', approved: true, reason: 'approved by alice' },
    ]);
    expect(answer(d.effects)).toMatchObject({ text: 'A1 approved.' });
    expect(d.effects).toContainEqual({
      type: 'record',
      record: { kind: 'approval', id: 'A1', agent: 'code', tool: 'bash', status: 'approved', by: 'alice' },
    });
  });

  it('refuses another member, however they spell it; an operator may answer', () => {
    const state = run(asked(), { type: 'approval', request: request(asked()) }).state;
    const byCarol = run(state, command('approve', 'A1', 'carol'));
    expect(results(byCarol.effects)).toEqual([]);
    expect(answer(byCarol.effects)).toMatchObject({ text: 'Only @alice (who asked) or an operator can answer A1.' });
    // A member whose display name is the asker's, but not their id, is another member.
    const namesake = run(state, {
      type: 'command',
      command: { id: 'c', name: 'approve', args: 'A1', user: 'alice', userId: 'id-other', isOperator: false },
    });
    expect(results(namesake.effects)).toEqual([]);
    const byOperator = run(state, command('deny', 'A1', 'olga', true));
    expect(results(byOperator.effects)).toEqual([
      { type: 'approval-result', token: 't1', approved: false, reason: 'olga denied it' },
    ]);
    expect(byOperator.state.approvals).toEqual([]);
  });

  it('expires as a denial with one line; /pass denies every card', () => {
    const state = run(asked(), { type: 'approval', request: request(asked()) }).state;
    const expired = run(state, { type: 'approval-expired', id: 'A1' });
    expect(results(expired.effects)).toEqual([
      { type: 'approval-result', token: 't1', approved: false, reason: 'nobody approved it in time' },
    ]);
    expect(lines(expired)).toEqual(['Nobody answered A1 in time: @code does not run it.']);
    const passed = run(state, {
      type: 'command',
      command: { id: 'c', name: 'pass', args: '', user: 'olga', isOperator: true },
    });
    expect(results(passed.effects)).toEqual([
      { type: 'approval-result', token: 't1', approved: false, reason: '/pass stopped the turn' },
    ]);
  });

  it('binds the arguments shown: a changed command is a new card', () => {
    const first = asked();
    const one = run(first, { type: 'approval', request: request(first) });
    const two = run(one.state, { type: 'approval', request: request(first, { input: 'rm -rf src', token: 't2' }) });
    expect(two.state.approvals?.map((a) => [a.id, a.input])).toEqual([
      ['A1', 'rm -rf build'],
      ['A2', 'rm -rf src'],
    ]);
    const approved = run(two.state, command('approve', 'A1', 'alice'));
    expect(results(approved.effects)).toEqual([
      { type: 'approval-result', token: 't1', approved: true, reason: 'approved by alice' },
    ]);
  });

  it('keeps a waiting turn parked across a restart, and takes it again once its card is approved', () => {
    const first = asked();
    const carded = run(first, { type: 'approval', request: request(first) });
    const card = carded.effects.find((e) => e.type === 'post');
    if (card?.type !== 'post') throw new Error('no card');
    const waiting = run(carded.state, { type: 'posted', post: card.post.id, platformIds: ['card1'] }).state;
    const restarted = run(waiting, { type: 'restart' });
    expect(restarted.effects).toContainEqual({
      type: 'approval-timer',
      at: waiting.approvals?.[0]?.expiresAt,
      id: 'A1',
    });
    // Not taken again while its card waits: no model call is spent on a turn that can only wait.
    const again = run(restarted.state, { type: 'catch-up', phase: 'done' });
    expect(again.effects.filter((e) => e.type === 'ask')).toEqual([]);
    const answered = run(again.state, command('approve', 'A1', 'alice'));
    const line = answered.effects.find((e) => e.type === 'post');
    if (line?.type !== 'post') throw new Error('no line');
    const approved = run(answered.state, { type: 'posted', post: line.post.id, platformIds: ['line1'] });
    const taken = approved.effects.find((e) => e.type === 'ask');
    expect(taken?.type === 'ask' && taken.turns[0]?.again).toBe(true);
    const asking = run(approved.state, { type: 'approval', request: request(approved.state, { token: 't9' }) });
    expect(lines(asking)).toEqual([]); // no second card
    expect(results(asking.effects)).toEqual([
      { type: 'approval-result', token: 't9', approved: true, reason: 'approved' },
    ]);
  });

  it("gives the room to another human's question while a card waits, and takes the turn again once answered", () => {
    // Each decision's posts reach the platform.
    const settle = (d: { state: RoomState; effects: readonly Effect[] }) => {
      let out = d;
      for (const e of d.effects) {
        if (e.type === 'post') out = run(out.state, { type: 'posted', post: e.post.id, platformIds: [`p${now}`] });
      }
      return out;
    };
    const first = asked('alice');
    const carded = settle(run(first, { type: 'approval', request: request(first) }));
    const bob = run(carded.state, {
      type: 'message',
      message: {
        author: 'bob',
        authorId: 'id-bob',
        kind: 'human',
        text: '@code what time is it?',
        platformIds: ['m2'],
        at: now,
      },
    });
    expect(bob.effects).toContainEqual({ type: 'stop', ask: 1, reason: 'approval' });
    expect(bob.state.current?.ask.questions.map((q) => q.human)).toEqual(['bob']);
    expect(bob.state.queue.map((q) => [q.id, q.parked])).toEqual([[1, true]]);
    // Bob's turn ends; the parked turn is not taken while its card waits.
    const noon = settle(
      run(bob.state, { type: 'answer', ask: bob.state.current?.ask.id ?? 0, outcome: { kind: 'reply', text: 'noon' } }),
    );
    expect(noon.state.current).toBeNull();
    // Denied while parked: the turn is taken again and reads the denial; no second card.
    const denied = settle(run(noon.state, command('deny', 'A1', 'alice')));
    expect(denied.state.current?.ask.id).toBe(1);
    const asking = run(denied.state, { type: 'approval', request: request(denied.state, { token: 't5' }) });
    expect(lines(asking)).toEqual([]);
    expect(results(asking.effects)).toEqual([
      { type: 'approval-result', token: 't5', approved: false, reason: 'alice denied it' },
    ]);
    expect(asking.state.approvals ?? []).toEqual([]);
  });

  it('lets a turn that ends without being taken again take its cards with it (cut by restarts, or replaced)', () => {
    // Each decision's posts reach the platform.
    const settled = (d: { state: RoomState; effects: readonly Effect[] }): RoomState => {
      let state = d.state;
      for (const e of d.effects) {
        if (e.type === 'post') state = run(state, { type: 'posted', post: e.post.id, platformIds: [`p${now}`] }).state;
      }
      return state;
    };
    const first = asked();
    let state = settled(run(first, { type: 'approval', request: request(first) }));
    state = settled(run(state, command('approve', 'A1', 'alice')));
    // Cut by restarts too often (12.2): the turn is not taken again, and its approved card goes with it.
    for (let i = 0; i < 3; i++) {
      state = settled(run(state, { type: 'restart' }));
      state = settled(run(state, { type: 'catch-up', phase: 'done' }));
    }
    expect(state.current).toBeNull();
    expect(state.approvals ?? []).toEqual([]);
    const late = run(state, command('approve', 'A1', 'olga', true));
    expect(results(late.effects)).toEqual([]);
    expect(answer(late.effects)).toMatchObject({ text: 'No approval A1 is waiting here.' });
    expect(state.queue).toEqual([]);
    // Waiting to be taken again when its human's newer message replaces it (2.3): the card goes too.
    const again = asked();
    const waiting = settled(
      run(settled(run(again, { type: 'approval', request: request(again) })), { type: 'restart' }),
    );
    expect(waiting.approvals?.map((a) => a.id)).toEqual(['A1']);
    const replaced = run(waiting, {
      type: 'message',
      message: {
        author: 'alice',
        authorId: 'id-alice',
        kind: 'human',
        text: 'never mind',
        platformIds: ['m2'],
        at: now,
      },
    });
    expect(replaced.state.queue).toEqual([]);
    expect(replaced.state.approvals ?? []).toEqual([]);
  });

  it('refuses a call too long to show in full, and one for a turn that is over', () => {
    const state = asked();
    const long = run(state, { type: 'approval', request: request(state, { tooLong: true }) });
    expect(results(long.effects)[0]).toMatchObject({ approved: false });
    const over = run(state, { type: 'approval', request: request(state, { ask: 99 }) });
    expect(results(over.effects)).toEqual([
      { type: 'approval-result', token: 't1', approved: false, reason: 'the turn is over' },
    ]);
  });

  it('lets only operators answer a turn that answers no one person (an agent asked, or several humans)', () => {
    const state = asked();
    const current = state.current;
    if (!current) throw new Error('no turn');
    const shared: RoomState = { ...state, current: { ...current, ask: { ...current.ask, questions: [] } } };
    const d = run(shared, { type: 'approval', request: request(shared) });
    expect(lines(d)[0]).toContain('No one person asked for it: an operator may answer');
    expect(answer(run(d.state, command('approve', 'A1', 'alice')).effects)).toMatchObject({
      text: 'Only an operator can answer A1.',
    });
  });
});

describe('the root of a chain (rule 17.2)', () => {
  const two: RoomSetup = roomSetup({
    agents: [
      { name: 'data', activation: 'mention' },
      { name: 'code', activation: 'mention' },
    ],
  });
  const go = (state: RoomState, event: Input) => {
    now += 1000;
    return decide(two, state, { ...event, now } as RoomEvent, context);
  };

  it("carries the human who started it through a request to another agent: they may approve that agent's call", () => {
    let d = go(EMPTY_STATE, {
      type: 'message',
      message: {
        author: 'alice',
        authorId: 'id-alice',
        kind: 'human',
        text: '@data tidy up',
        platformIds: ['m1'],
        at: now,
      },
    });
    const dataAsk = d.state.current?.ask.id ?? 0;
    d = go(d.state, {
      type: 'answer',
      ask: dataAsk,
      outcome: { kind: 'reply', text: '@code please remove the build folder' },
    });
    const post = d.effects.find((e) => e.type === 'post');
    if (post?.type !== 'post') throw new Error('no post');
    d = go(d.state, { type: 'posted', post: post.post.id, platformIds: ['p1'] });
    const codeAsk = d.state.current?.ask;
    expect(codeAsk).toMatchObject({ agent: 'code', reason: 'request', root: { id: 'id-alice', name: 'alice' } });
    d = go(d.state, {
      type: 'approval',
      request: { ask: codeAsk?.id ?? 0, agent: 'code', tool: 'bash', input: 'rm -rf build', token: 'tc' },
    });
    expect(d.state.approvals?.[0]?.root).toEqual({ id: 'id-alice', name: 'alice' });
    const byAlice = go(d.state, command('approve', 'A1', 'alice'));
    expect(results(byAlice.effects)).toEqual([
      { type: 'approval-result', token: 'tc', approved: true, reason: 'approved by alice' },
    ]);
  });
});
