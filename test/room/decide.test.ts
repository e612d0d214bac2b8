/**
 * Whole decisions of the room machine, replayed as conversations through the script language (test/model): who is
 * asked, in which role, about which message; what is posted; how requests settle; hand-backs and their lines.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/room/decide.js';
import { EMPTY_STATE, type RoomSetup } from '../../src/room/state.js';
import { MachineSystem } from '../model/machine.js';
import { dmRoom, MAIN, type Observed, type Oracle, type Step, type World, type WorldAgent } from '../model/script.js';
import { roomSetup } from './room-setup.js';

const agent = (name: string, activation: 'always' | 'mention' = 'mention', actions = false): WorldAgent => ({
  name,
  activation,
  actions,
});

function world(agents: WorldAgent[], patch: Partial<World> = {}): World {
  return {
    agents,
    humans: ['alice', 'bob'],
    turnLimit: 20,
    privacy: 'off',
    timeoutMs: 600_000,
    editWindowMs: 120_000,
    maxToolRounds: 8,
    ...patch,
  };
}

const text = (t: string) => ({ kind: 'text' as const, text: t });
const say = (t: string, human = 'alice', room = MAIN): Step => ({ kind: 'say', room, human, text: t });
const deliver = (room = MAIN): Step => ({ kind: 'deliver', room });

/** Runs the steps, delivering every turn after each until the room is quiet (at most `max` deliveries). */
function run(system: MachineSystem, steps: Step[], max = 60): Observed[] {
  const out: Observed[] = [];
  for (const step of steps) {
    out.push(...system.step(step));
    for (let i = 0; i < max; i++) {
      const busy = [MAIN, 'chat:side'].find((room) => {
        const current = system.state(room).current;
        return current && current.post === undefined;
      });
      if (!busy) break;
      out.push(...system.step(deliver(busy)));
    }
  }
  return out;
}

const asks = (observed: Observed[]) =>
  observed.flatMap((o) =>
    o.kind === 'ask' ? [`${o.agent}:${o.reason}${o.requests.length ? `#${o.requests.join(',')}` : ''}`] : [],
  );
const posts = (observed: Observed[]) =>
  observed.flatMap((o) =>
    o.kind === 'post'
      ? [`${o.agent}: ${o.text}`]
      : o.kind === 'line'
        ? [`[${o.line.kind}${'reason' in o.line ? ` ${o.line.reason}` : ''}]`]
        : [],
  );

describe('the room machine', () => {
  it("asks nobody about an edit in a DM, even one naming another agent: the DM's message already asked its agent", () => {
    const oracle: Oracle = { ada: [text('here is my view')], cy: [text('thanks!')] };
    const m = new MachineSystem(world([agent('ada'), agent('bo', 'always'), agent('cy')]), oracle);
    const dm = dmRoom('ada', 'alice');
    const seen = [
      ...m.step(say('what do you think.', 'alice', dm)),
      ...m.step({ kind: 'edit', room: dm, back: 1, text: '@cy what do you think.' }),
    ];
    seen.push(...run(m, [deliver(dm)]));
    expect(asks(seen)).toEqual(['ada:direct']);
    expect(posts(seen)).toEqual(['ada: here is my view']);
  });

  it('asks every agent a human names, in the order named, then the always agents', () => {
    const oracle: Oracle = { beta: [text('beta thinks so')], alpha: [text('alpha thinks so')], data: [text('[pass]')] };
    const m = new MachineSystem(world([agent('alpha'), agent('beta'), agent('data', 'always')]), oracle);
    const seen = run(m, [say('@beta @alpha what do you each think?')]);
    expect(asks(seen)).toEqual(['beta:addressed', 'alpha:addressed', 'data:always']);
    expect(posts(seen)).toEqual(['beta: beta thinks so', 'alpha: alpha thinks so']);
  });

  it('stops two always agents at TURN_LIMIT with one hand-back line', () => {
    const oracle: Oracle = {
      alice_bot: Array.from({ length: 10 }, (_, i) => text(`a ${i}`)),
      bob_bot: Array.from({ length: 10 }, (_, i) => text(`b ${i}`)),
    };
    const m = new MachineSystem(
      world([agent('alice_bot', 'always'), agent('bob_bot', 'always')], { turnLimit: 5 }),
      oracle,
    );
    const seen = run(m, [say('talk among yourselves')]);
    expect(posts(seen)).toEqual([
      'alice_bot: a 0',
      'bob_bot: b 0',
      'alice_bot: a 1',
      'bob_bot: b 1',
      'alice_bot: a 2',
      '[hand-back turn limit]',
    ]);
    expect(m.state(MAIN).control).toEqual({ holder: 'humans', count: 0, reason: 'turn limit' });
  });

  it('asks an always agent that another agent asks once, files its answer, and resumes the asker once', () => {
    // pm (mention) and writer (always): the writer is asked as the request's participant only.
    const oracle: Oracle = {
      pm: [
        text('@writer please draft the launch note.'),
        text('@writer thanks. Now please make it shorter.'),
        text('Done.'),
      ],
      writer: [text('@pm DRAFT-1: launch'), text('@pm DRAFT-2: short'), text('[pass]')],
    };
    const m = new MachineSystem(world([agent('pm'), agent('writer', 'always')]), oracle);
    const seen = run(m, [say('@pm please get us a launch note from the writer')]);
    expect(posts(seen)).toEqual([
      'pm: @writer please draft the launch note.',
      'writer: @pm DRAFT-1: launch',
      'pm: @writer thanks. Now please make it shorter.',
      'writer: @pm DRAFT-2: short',
      'pm: Done.',
    ]);
    expect(asks(seen)).toEqual([
      'pm:addressed',
      'writer:request#1',
      'pm:resume',
      'writer:request#2',
      'pm:resume',
      'writer:always',
    ]);
    const settled = seen.filter((o) => o.kind === 'request' && o.status === 'answered');
    expect(settled.map((o) => (o.kind === 'request' ? o.answers : []))).toEqual([
      [{ participant: 'writer', outcome: 'answer', text: '@pm DRAFT-1: launch' }],
      [{ participant: 'writer', outcome: 'answer', text: '@pm DRAFT-2: short' }],
    ]);
  });

  it('routes a rally the same way whether or not a human named the first agent', () => {
    const rally = (): Oracle => ({
      ping: Array.from({ length: 20 }, (_, i) => text(`@pong serve number ${i}`)),
      pong: Array.from({ length: 20 }, (_, i) => text(`@ping return number ${i}`)),
    });
    const agents = [agent('ping', 'always'), agent('pong', 'always')];
    const named = run(new MachineSystem(world(agents, { turnLimit: 6 }), rally()), [say('@ping serve the rally')]);
    const unnamed = run(new MachineSystem(world(agents, { turnLimit: 6 }), rally()), [say('serve the rally')]);
    expect(posts(named)).toEqual(posts(unnamed));
    expect(posts(named).at(-1)).toBe('[hand-back turn limit]');
    expect(posts(named)).toHaveLength(7);
  });

  it("keeps another human's question queued when a second human speaks", () => {
    const oracle: Oracle = { a: [text('ETA is Friday.')], b: [text('Budget is fine.')] };
    const m = new MachineSystem(world([agent('a'), agent('b')]), oracle);
    const seen: Observed[] = [];
    seen.push(...m.step(say('@a what is the ETA?', 'alice')));
    seen.push(...m.step(say('@b what is the budget?', 'bob')));
    seen.push(...run(m, [deliver()]));
    expect(posts(seen)).toEqual(['a: ETA is Friday.', 'b: Budget is fine.']);
  });

  it("replaces a human's own queued question with their newer message", () => {
    const oracle: Oracle = { a: [text('slow answer')], b: [text('never')], c: [text('on it')] };
    const m = new MachineSystem(world([agent('a'), agent('b'), agent('c')]), oracle);
    const seen: Observed[] = [];
    seen.push(...m.step(say('@a @b first question')));
    seen.push(...m.step(say('never mind, @c instead')));
    seen.push(...run(m, [deliver()]));
    expect(asks(seen)).toEqual(['a:addressed', 'c:addressed']);
    expect(posts(seen)).toEqual(['a: slow answer', 'c: on it']);
  });

  it('answers several humans queued for one agent in one turn, and drops the oldest past five', () => {
    const oracle: Oracle = { busy: [text('first'), text('to all of you')] };
    const humans = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7'];
    const m = new MachineSystem(world([agent('busy')], { humans }), oracle);
    const seen: Observed[] = [];
    for (const human of humans) seen.push(...m.step(say(`@busy question from ${human}`, human)));
    const queued = m.state(MAIN).queue;
    expect(queued).toHaveLength(1);
    expect(queued[0]?.questions.map((q) => q.human)).toEqual(['h3', 'h4', 'h5', 'h6', 'h7']);
    expect(seen.filter((o) => o.kind === 'line').map((o) => (o.kind === 'line' ? o.line : null))).toEqual([
      { kind: 'dropped', drops: [{ agent: 'busy', humans: ['h2'] }] },
    ]);
  });

  it('counts messages an agent posts by an action toward TURN_LIMIT, and does not post its reply after', () => {
    const oracle: Oracle = {
      chatty: [
        {
          kind: 'text',
          text: 'done',
          actions: [1, 2, 3, 4, 5].map((i) => ({
            kind: 'channel' as const,
            room: 'here' as const,
            text: `update ${i}`,
            requestReply: [],
          })),
        },
      ],
    };
    const m = new MachineSystem(world([agent('chatty', 'mention', true)], { turnLimit: 3 }), oracle);
    const seen = run(m, [say('@chatty report')]);
    expect(posts(seen)).toEqual(['chatty: update 1', 'chatty: update 2', 'chatty: update 3', '[hand-back turn limit]']);
    expect(seen.filter((o) => o.kind === 'action').map((o) => (o.kind === 'action' ? o.result : ''))).toEqual([
      'posted',
      'posted',
      'posted',
      'refused',
      'refused',
    ]);
  });

  it('tells the room when a deadline throws a late turn away, and resumes the requester without it', () => {
    const oracle: Oracle = { pm: [text('@slow your view?'), text('Going on without slow.')], slow: [text('too late')] };
    const m = new MachineSystem(world([agent('pm'), agent('slow')]), oracle);
    const seen: Observed[] = [];
    seen.push(...run(m, [say('@pm decide')], 1));
    seen.push(...m.step({ kind: 'deadline' }));
    seen.push(...run(m, [deliver()]));
    expect(posts(seen)).toEqual(['pm: @slow your view?', '[deadline]', 'pm: Going on without slow.']);
  });

  it('tells the requester an agent stopped by /pass <agent> was stopped, not that it passed', () => {
    const oracle: Oracle = { pm: [text('@y your view?'), text('ok')], y: [text('never posted')] };
    const m = new MachineSystem(world([agent('pm'), agent('y')]), oracle);
    const seen: Observed[] = [];
    seen.push(...run(m, [say('@pm ask y')], 1));
    seen.push(...m.step({ kind: 'command', room: MAIN, name: 'pass', args: 'y', operator: true }));
    seen.push(...run(m, [deliver()]));
    const answered = seen.find((o) => o.kind === 'request' && o.status === 'answered');
    expect(answered).toMatchObject({ answers: [{ participant: 'y', outcome: 'stopped' }] });
    expect(posts(seen)).toEqual(['pm: @y your view?', 'pm: ok']);
  });

  it("never files a human's message as the answer of an agent whose name the human shares (0, 5.3)", () => {
    const oracle: Oracle = {
      pm: [text('@code please check the plan.'), text('Thanks, merged.')],
      code: [text('LGTM')],
    };
    const m = new MachineSystem(world([agent('pm'), agent('code')]), oracle);
    const seen: Observed[] = [];
    seen.push(...run(m, [say('@pm get the plan checked')], 1));
    // A human who goes by "code" speaks while the agent @code is writing its answer to pm's request.
    seen.push(...m.step(say('the plan looks fine to me', 'code')));
    expect(seen.filter((o) => o.kind === 'request' && o.status !== 'open')).toEqual([]);
    seen.push(...run(m, [deliver()]));
    const answered = seen.find((o) => o.kind === 'request' && o.status === 'answered');
    expect(answered).toMatchObject({ answers: [{ participant: 'code', outcome: 'answer', text: 'LGTM' }] });
    expect(posts(seen)).toEqual(['pm: @code please check the plan.', 'code: LGTM', 'pm: Thanks, merged.']);
  });

  it('wakes an agent that asked two humans once for each human that answers', () => {
    const oracle: Oracle = { code: [text('@alice @bob CSV or JSON?'), text('noted alice'), text('noted bob')] };
    const m = new MachineSystem(world([agent('code')]), oracle);
    const seen = run(m, [say('hi all', 'bob'), say('@code export it'), say('CSV', 'alice'), say('JSON', 'bob')]);
    expect(asks(seen)).toEqual(['code:addressed', 'code:awaiting', 'code:awaiting']);
  });

  it('reads [pass] variants as passes and a quoted line as no address', () => {
    const oracle: Oracle = { a: [text('[pass].'), text('`[pass]`'), text('[PASS] nothing to add')], eps: [text('hi')] };
    const m = new MachineSystem(world([agent('a', 'always'), agent('eps')]), oracle);
    const seen = run(m, [say('one'), say('two'), say('> @eps wrote: hello\nthree')]);
    expect(posts(seen)).toEqual([]);
    expect(asks(seen)).toEqual(['a:always', 'a:always', 'a:always']);
  });

  it('hands back on a reply whose only code span is the tag, and keeps a tag in a fenced block literal', () => {
    const oracle: Oracle = {
      a: [text('All done. `<world>pass</world>`'), text('Example:\n```\n<world>pass</world>\n```')],
    };
    const m = new MachineSystem(world([agent('a')]), oracle);
    const seen = run(m, [say('@a finish'), say('@a show the tag')]);
    expect(posts(seen)).toEqual([
      'a: All done.',
      '[hand-back world pass]',
      'a: Example:\n```\n<world>pass</world>\n```',
    ]);
  });

  it('gives the same decisions whether or not the state is saved and loaded between events', () => {
    const oracle = (): Oracle => ({
      pm: [text('@writer @expert draft and check it'), text('Both done.')],
      writer: [text('@expert is the intro right?'), text('Draft ready.')],
      expert: [text('Numbers check out.'), text('Intro is right.')],
    });
    const agents = [agent('pm'), agent('writer'), agent('expert', 'always')];
    const a = run(new MachineSystem(world(agents), oracle()), [say('@pm get it done'), say('thanks all')]);
    const b = run(new MachineSystem(world(agents), oracle(), { roundTrip: false }), [
      say('@pm get it done'),
      say('thanks all'),
    ]);
    expect(a).toEqual(b);
  });

  it('keeps a reply the platform keeps failing waiting, and the room with it, then posts and routes it (3.7)', () => {
    const oracle: Oracle = { ada: [text('@bo what do you think?')], bo: [text('bo agrees')] };
    const m = new MachineSystem(world([agent('ada'), agent('bo')]), oracle);
    const waiting = run(m, [
      { kind: 'reply-stalls', room: MAIN },
      say('@ada please check the plan'),
      say('@bo and you?', 'bob'),
    ]);
    expect(posts(waiting)).toEqual([]);
    // Nothing else starts while the reply waits; bob's question waits in the queue.
    expect(asks(waiting)).toEqual(['ada:addressed']);
    expect(m.state(MAIN).posts.map((p) => p.text)).toEqual(['@bo what do you think?']);
    expect(m.state(MAIN).control.holder).toBe('agents');
    const through = run(m, [{ kind: 'reply-through', room: MAIN }]);
    expect(posts(through)).toEqual(['ada: @bo what do you think?', 'bo: bo agrees']);
  });

  it('drops a reply still waiting for the platform on /pass and on /reset: it is never posted (8.1, 8.3)', () => {
    for (const name of ['pass', 'reset'] as const) {
      const m = new MachineSystem(world([agent('ada')]), { ada: [text('first answer'), text('second answer')] });
      run(m, [{ kind: 'reply-stalls', room: MAIN }, say('@ada one?')]);
      expect(m.state(MAIN).posts).toHaveLength(1);
      const dropped = run(m, [{ kind: 'command', room: MAIN, name, args: '', operator: true }]);
      expect(m.state(MAIN).posts).toEqual([]);
      expect(m.state(MAIN).current).toBeNull();
      const after = run(m, [{ kind: 'reply-through', room: MAIN }, say('@ada two?')]);
      expect(posts([...dropped, ...after])).toEqual(['ada: second answer']);
    }
  });

  it("fails the call of an action's post that /pass drops before it reached the platform, and says so", () => {
    const setup: RoomSetup = roomSetup({ key: 'chat:main', agents: [{ name: 'ada', activation: 'mention' }] });
    const state = {
      ...EMPTY_STATE,
      posts: [{ id: 1, agent: 'ada', text: 'a note for the room', at: 1, purpose: 'action' as const, call: 'call-1' }],
      nextPost: 2,
    };
    const pass = { id: 'c', name: 'pass' as const, args: '', user: 'op', isOperator: true };
    const decision = decide(setup, state, { type: 'command', now: 2, command: pass }, { nextRequestId: 1 });
    expect(decision.state.posts).toEqual([]);
    expect(decision.effects).toEqual(
      expect.arrayContaining([
        { type: 'drop-post', post: 1 },
        {
          type: 'action-result',
          call: 'call-1',
          result: { kind: 'failed', reason: 'an operator dropped it before it could be posted' },
        },
        { type: 'answer', command: 'c', text: 'Control is with the humans (1 waiting post dropped).' },
      ]),
    );
  });

  it('tells the room in one line when /pass or /reset came from the operator console, and not when typed there', () => {
    const setup: RoomSetup = roomSetup({ key: 'web:general', agents: [{ name: 'ada', activation: 'mention' }] });
    const lines = (name: 'pass' | 'reset', fromConsole: boolean) =>
      decide(
        setup,
        EMPTY_STATE,
        { type: 'command', now: 2, command: { id: 'c', name, args: '', user: 'ana', isOperator: true, fromConsole } },
        { nextRequestId: 1 },
      ).effects.flatMap((e) => (e.type === 'post' && e.post.agent === null ? [e.post.text] : []));
    expect(lines('pass', true)).toEqual(['Control is with the humans: ana used /pass from the operator console.']);
    expect(lines('reset', true)).toEqual(['This room was reset: ana used /reset from the operator console.']);
    expect(lines('pass', false)).toEqual([]);
    expect(lines('reset', false)).toEqual([]);
  });
});
