/**
 * Who a message asks (rules 1.2, 2 and 4), replayed as conversations through the room machine.
 */
import { describe, expect, it } from 'vitest';
import { requestsOf } from '../../src/room/reading.js';
import { MachineSystem } from '../model/machine.js';
import { dmRoom, MAIN, type Observed, type Oracle, type Reply, type Step, type World } from '../model/script.js';

const world = (patch: Partial<World> = {}): World => ({
  agents: [
    { name: 'data', activation: 'always', actions: true },
    { name: 'code', activation: 'mention', actions: false },
    { name: 'alpha', activation: 'mention', actions: false },
    { name: 'beta', activation: 'mention', actions: false },
    { name: 'reviewer', activation: 'always', actions: false },
  ],
  humans: ['user'],
  turnLimit: 20,
  privacy: 'off',
  timeoutMs: 600_000,
  editWindowMs: 120_000,
  maxToolRounds: 8,
  ...patch,
});
const text = (t: string): Reply => ({ kind: 'text', text: t });
const say = (t: string, room = MAIN): Step => ({ kind: 'say', room, human: 'user', text: t });

/** Plays the steps, delivering every turn after each; returns the asks, as `agent:reason`, per step. */
function asks(oracle: Oracle, steps: Step[], patch: Partial<World> = {}): string[][] {
  const m = new MachineSystem(world(patch), oracle);
  return steps.map((step) => {
    const seen: Observed[] = [...m.step(step)];
    const room = step.kind === 'say' ? step.room : MAIN;
    for (let i = 0; i < 40 && m.state(room).current; i++) seen.push(...m.step({ kind: 'deliver', room }));
    return seen.flatMap((o) => (o.kind === 'ask' ? [`${o.agent}:${o.reason}`] : []));
  });
}

describe("who a human's message asks", () => {
  it('asks every agent a human names, in the order named, before the always agents', () => {
    expect(asks({}, [say('@beta @alpha what do you think?')])).toEqual([
      ['beta:addressed', 'alpha:addressed', 'data:always', 'reviewer:always'],
    ]);
  });

  it('puts an addressed mention-only agent before an always agent configured first', () => {
    expect(asks({}, [say('@code have a look')])).toEqual([['code:addressed', 'data:always', 'reviewer:always']]);
  });

  it('asks first the agent whose last message asked this speaker', () => {
    const oracle = { code: [text('@user CSV or JSON?'), text('CSV it is')] };
    expect(asks(oracle, [say('@code export it'), say('CSV')])[1]).toEqual([
      'code:awaiting',
      'data:always',
      'reviewer:always',
    ]);
  });

  it('does not take a mention that answered the speaker for a question to them', () => {
    const oracle = { code: [text('@user 4.')] };
    expect(asks(oracle, [say('@code what is 2+2?'), say('great, next topic')])[1]).toEqual([
      'data:always',
      'reviewer:always',
    ]);
  });

  it('asks only the DM agent in a DM, whoever the message names', () => {
    expect(asks({}, [say('@data @beta hello', dmRoom('code', 'user'))])).toEqual([['code:direct']]);
  });

  it('never asks an agent that cannot see the message (privacy)', () => {
    expect(asks({}, [say('@code a secret')], { privacy: 'mentions' })).toEqual([['code:addressed']]);
  });
});

describe("who an agent's message asks", () => {
  it("wakes a mentioned agent and the always agents with an action's post, never its author", () => {
    const oracle = {
      data: [
        {
          kind: 'text' as const,
          text: '[pass]',
          actions: [{ kind: 'channel' as const, room: 'here' as const, text: '@code look at this', requestReply: [] }],
        },
      ],
    };
    // The action's post makes a new round: the observers of 'hello' still queued are asked about it instead (4.4).
    expect(asks(oracle, [say('hello')])).toEqual([['data:always', 'code:mentioned', 'reviewer:always']]);
  });

  it('wakes nobody with a bridge line that names an agent', () => {
    const oracle = { data: [{ kind: 'fail' as const, reason: 'timeout' }] };
    expect(asks(oracle, [say('hello')])).toEqual([['data:always', 'reviewer:always']]);
  });
});

describe('requestsOf', () => {
  const read = (input: Partial<Parameters<typeof requestsOf>[0]>) =>
    requestsOf({ agents: [], humans: [], author: 'code', answering: [], text: '', ...input });

  it('drops the author and the people being answered; keeps everyone else, humans included', () => {
    expect(read({ agents: ['pm', 'expert', 'code'], answering: ['PM'] })).toEqual(['expert']);
    expect(read({ humans: ['user'] })).toEqual(['user']);
    expect(read({ humans: ['user'], answering: ['user'], text: '@user 42 rows.' })).toEqual([]);
  });

  it('asks a human it answers when the answer asks a question (outside code); an agent it answers, never', () => {
    const question = '@user which file should I read? @pm which one?';
    expect(read({ agents: ['pm'], humans: ['user'], answering: ['user', 'pm'], text: question })).toEqual(['user']);
    expect(read({ humans: ['user'], answering: ['user'], text: '@user see `a?b`' })).toEqual([]);
  });
});
