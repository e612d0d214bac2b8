/**
 * How the room decides who speaks, seen from the users' side: whole conversations replayed through the bridge on
 * the in-memory platform, judged only by what is posted and what the model was asked.
 * Each of these broke before the room became one decision (when the rules were spread over the shell):
 * - a follow-up request: the requester posts its follow-up twice and the agent it asked is never asked again.
 * - a rally between two always agents: with the human naming @ping it stops after three messages, no hand-back.
 * - queued questions: a newer human message drops another human's question; no line names dropped questions
 *   (past 5 waiting, or by /pass).
 * - an edit that adds a mention under privacy: the always agent is shown the edit and the reply to it.
 * - an agent that asked two humans is woken by the first answer only.
 * - a request's deadline stops the late turn but posts no line naming who did not answer.
 * - /pass <agent> during a request: the requester's resume says the agent passed.
 * - `[pass].`, `` `[pass]` `` and `[pass] nothing to add` are posted as messages.
 * - a quoted line (`> @eps wrote: …`) wakes @eps.
 * - a reply that is only `` `<world>pass</world>` `` is posted as a message and does not hand back.
 * Passing then too, kept as guards for the same rules: the world-pass tag inside a longer fenced block is literal text;
 * messages posted by send_channel_message count toward TURN_LIMIT.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Inbound } from '../../src/ports.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, newestOf, roomMessagesOf, situationOf, startHarness } from '../helpers/harness.js';
import { until } from '../helpers/until.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The harness of the running test (a test that plays a conversation twice opens two). */
let h: Harness;
const opened: Harness[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((harness) => harness.close()));
});
async function open(options: Parameters<typeof startHarness>[0]): Promise<Harness> {
  h = await startHarness(options);
  opened.push(h);
  return h;
}

const resuming = (r: RecordedRequest) =>
  /request #\d+ (has answered|reached its deadline|is settled)/.test(situationOf(r));
const asParticipant = (r: RecordedRequest) => /asked for your action \(request #\d+\)/.test(situationOf(r));
const observing = (r: RecordedRequest) => situationOf(r).includes('you were not asked directly');
const sees = (r: RecordedRequest, marker: string) => JSON.stringify(r.messages).includes(marker);
/** Why a request was made: the role its agent was asked in. */
const role = (r: RecordedRequest) =>
  resuming(r) ? 'resume' : asParticipant(r) ? 'request' : observing(r) ? 'observe' : 'asked';
/** Requests that ask one agent about one message in one role more than once. */
function askedTwice(requests: readonly RecordedRequest[]): string[] {
  const keys = requests.map((r) => `${agentOf(r)} as ${role(r)} about ${newestOf(r)}`);
  return keys.filter((key, index) => keys.indexOf(key) !== index);
}

describe('a requester that follows up with the agent it asked', () => {
  it('posts its follow-up once, and the agent it asked answers it as a participant', async () => {
    await open({
      agents: [
        { name: 'pm', activation: 'mention' },
        { name: 'writer', activation: 'always' },
      ],
    });
    h.llm.respond((r) => {
      if (agentOf(r) === 'pm') {
        // pm goes on from the newest draft it can see.
        if (sees(r, 'DRAFT-2')) return { content: 'Done.' };
        if (sees(r, 'DRAFT-1')) return { content: '@writer thanks. Now please make it shorter.' };
        return { content: '@writer please draft the launch note.' };
      }
      // The writer answers what it reads last, whatever woke it (as a model does).
      if (newestOf(r).includes('make it shorter')) return { content: '@pm DRAFT-2: Roundtable 1.0 ships today.' };
      if (newestOf(r).includes('draft the launch note')) {
        return { content: '@pm DRAFT-1: Roundtable 1.0 ships today, with agents at the table.' };
      }
      return { content: '[pass]' };
    });
    await h.adapter.say('@pm please get us a launch note from the writer');
    await h.bridge.idle();

    expect(h.adapter.transcript()).toEqual([
      '[@pm]: @writer please draft the launch note.',
      '[@writer]: @pm DRAFT-1: Roundtable 1.0 ships today, with agents at the table.',
      '[@pm]: @writer thanks. Now please make it shorter.',
      '[@writer]: @pm DRAFT-2: Roundtable 1.0 ships today.',
      '[@pm]: Done.',
    ]);
    const writer = h.llm.requests.filter((r) => agentOf(r) === 'writer');
    expect(writer.filter(asParticipant)).toHaveLength(2);
    expect(writer.filter((r) => observing(r) && newestOf(r).startsWith('[@pm]: @writer'))).toEqual([]);
    const resumes = h.llm.requests.filter((r) => agentOf(r) === 'pm' && resuming(r));
    expect(resumes.map(situationOf)).toEqual([
      expect.stringContaining('- @writer: @pm DRAFT-1: Roundtable 1.0 ships today, with agents at the table.'),
      expect.stringContaining('- @writer: @pm DRAFT-2: Roundtable 1.0 ships today.'),
    ]);
    expect(resumes.map(situationOf).join('\n')).not.toContain('passed');
    expect(askedTwice(h.llm.requests)).toEqual([]);
  });

  it('does the same with the shipped agents when @code asks the always-on @data twice', async () => {
    await open({
      agents: [],
      config: (baseURL) =>
        loadConfig(
          {
            AGENTS_DIR: path.join(ROOT, 'agents'),
            DATA_DIR: ':memory:',
            OPENAI_BASE_URL: baseURL,
            LLM_MAX_RETRIES: '0',
            LLM_TIMEOUT_S: '10',
          },
          ROOT,
        ),
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'code') {
        if (sees(r, 'Q4 total:')) return { content: 'Done.' };
        if (sees(r, 'Q3 total:')) return { content: '@data thanks. Now the Q4 total, please.' };
        return { content: '@data what is the Q3 total?' };
      }
      if (agent === 'data') {
        if (newestOf(r).includes('Q4 total, please')) return { content: '@code Q4 total: 1.4M' };
        if (newestOf(r).includes('what is the Q3 total')) return { content: '@code Q3 total: 1.2M' };
      }
      return { content: '[pass]' };
    });
    await h.adapter.say('@code please get the Q3 total from data');
    await h.bridge.idle();

    expect(h.adapter.transcript()).toEqual([
      '[@code]: @data what is the Q3 total?',
      '[@data]: @code Q3 total: 1.2M',
      '[@code]: @data thanks. Now the Q4 total, please.',
      '[@data]: @code Q4 total: 1.4M',
      '[@code]: Done.',
    ]);
    const data = h.llm.requests.filter((r) => agentOf(r) === 'data');
    expect(data.filter(asParticipant)).toHaveLength(2);
    expect(data.filter((r) => observing(r) && newestOf(r).startsWith('[@code]: @data'))).toEqual([]);
    const resumes = h.llm.requests.filter((r) => agentOf(r) === 'code' && resuming(r));
    expect(resumes.map(situationOf)).toEqual([
      expect.stringContaining('- @data: @code Q3 total: 1.2M'),
      expect.stringContaining('- @data: @code Q4 total: 1.4M'),
    ]);
    expect(askedTwice(h.llm.requests)).toEqual([]);
  });
});

/**
 * ping and pong each answer the other by name with a new line every time (numbered in the order posted), and
 * pass when the newest message they see is their own: there is nothing of the other's to answer.
 */
function rallyPlayer(): (r: RecordedRequest) => { content: string } {
  let shots = 0;
  return (r) => {
    const agent = agentOf(r);
    if (newestOf(r).startsWith(`[@${agent}]:`)) return { content: '[pass]' };
    return { content: `@${agent === 'ping' ? 'pong' : 'ping'} shot ${++shots} from ${agent}` };
  };
}

describe('a rally between two always agents', () => {
  const agents = [
    { name: 'ping', activation: 'always' as const },
    { name: 'pong', activation: 'always' as const },
  ];

  async function play(opening: string): Promise<string[]> {
    await open({ agents, env: { TURN_LIMIT: '6' } });
    h.llm.respond(rallyPlayer());
    await h.adapter.say(opening);
    await h.bridge.idle();
    return h.adapter.transcript();
  }

  it('runs to TURN_LIMIT and hands back when the human names one of them, as it does unnamed', async () => {
    const unnamed = await play('serve the rally');
    const named = await play('@ping serve the rally');
    expect(unnamed).toEqual([
      '[@ping]: @pong shot 1 from ping',
      '[@pong]: @ping shot 2 from pong',
      '[@ping]: @pong shot 3 from ping',
      '[@pong]: @ping shot 4 from pong',
      '[@ping]: @pong shot 5 from ping',
      '[@pong]: @ping shot 6 from pong',
      expect.stringMatching(/^\[system\]: @human 6 agent messages in a row/),
    ]);
    expect(named).toEqual(unnamed);
  });
});

/** A promise a test resolves when it wants a held model answer to go out. */
function gate(): { held: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { held, release };
}

describe('questions waiting for a busy agent', () => {
  /** @a is busy writing carol's summary (held until released); other questions wait meanwhile. */
  async function busyRoom() {
    const summary = gate();
    await open({ agents: [{ name: 'a' }, { name: 'b' }] });
    h.llm.respond(async (r) => {
      const situation = situationOf(r);
      if (situation.includes('@carol asked')) {
        await summary.held;
        return { content: '@carol Summary: all on track.' };
      }
      const askers = /^(.*?) asked for your action/.exec(situation)?.[1] ?? '';
      return { content: `Answered ${[...askers.matchAll(/@(\w+)/g)].map((m) => m[1]).join(' ')}.` };
    });
    await h.adapter.say('@a please draft the summary', { user: 'carol' });
    await until(() => h.llm.requests.length === 1);
    return summary;
  }
  const systemLines = () => h.adapter.transcript().filter((line) => line.startsWith('[system]: '));
  const requestsOfA = () => h.llm.requests.filter((r) => agentOf(r) === 'a');

  it("answers several people's queued questions in one turn that names each asker", async () => {
    const summary = await busyRoom();
    await h.adapter.say('@a what is the ETA?', { user: 'alice' });
    await h.adapter.say('@a and the budget?', { user: 'bob' });
    summary.release();
    await h.bridge.idle();

    expect(requestsOfA()).toHaveLength(2);
    expect(situationOf(requestsOfA()[1] as RecordedRequest)).toMatch(/@alice and @bob asked for your action/);
    expect(systemLines()).toEqual([]);
  });

  it('keeps at most 5 questions waiting per agent and names whose question was dropped', async () => {
    const summary = await busyRoom();
    const askers = ['alice', 'bob', 'dave', 'erin', 'frank', 'grace'];
    for (const user of askers) await h.adapter.say(`@a a question from ${user}?`, { user });
    summary.release();
    await h.bridge.idle();

    const dropped = systemLines();
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatch(/@a\b.*@alice\b/);
    for (const kept of askers.slice(1)) expect(dropped[0]).not.toContain(`@${kept}`);
    expect(requestsOfA()).toHaveLength(2);
    const answered = situationOf(requestsOfA()[1] as RecordedRequest);
    for (const kept of askers.slice(1)) expect(answered).toContain(`@${kept}`);
    expect(answered).not.toContain('@alice');
  });

  it('names whose waiting questions /pass dropped', async () => {
    const summary = await busyRoom();
    await h.adapter.say('@a what is the ETA?', { user: 'alice' });
    await h.adapter.say('@a and the budget?', { user: 'bob' });
    expect(await h.adapter.command('pass')).toMatch(/^Control is with the humans/);
    summary.release();
    await h.bridge.idle();

    const dropped = systemLines();
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatch(/@a\b.*@alice\b/);
    expect(dropped[0]).toContain('@bob');
    expect(requestsOfA()).toHaveLength(1);
  });

  it('refuses /pass from a non-operator and still answers the waiting questions', async () => {
    const summary = await busyRoom();
    await h.adapter.say('@a what is the ETA?', { user: 'alice' });
    await h.adapter.say('@a and the budget?', { user: 'bob' });
    expect(await h.adapter.command('pass', '', { operator: false })).toBe('Only operators can use /pass.');
    summary.release();
    await h.bridge.idle();

    expect(systemLines()).toEqual([]);
    expect(h.adapter.transcript()).toEqual(['[@a]: @carol Summary: all on track.', '[@a]: Answered alice bob.']);
  });
});

describe('an edit that adds a mention under PRIVACY=mentions', () => {
  it('is seen only by its audience: an always agent is neither woken by it nor shown it', async () => {
    await open({
      agents: [
        { name: 'code', activation: 'mention' },
        { name: 'data', activation: 'always' },
      ],
      env: { PRIVACY: 'mentions' },
    });
    h.llm.respond((r) => ({ content: agentOf(r) === 'code' ? 'Checked: MARKER-reply' : '[pass]' }));
    const at = Date.now();
    const original: Inbound = {
      platform: 'test',
      channel: 'room',
      messageId: 'h-numbers',
      author: { id: 'u-user', name: 'user', kind: 'human' },
      text: 'please check the numbers',
      at,
    };
    await h.adapter.sink?.receive(original);
    await h.bridge.idle();
    await h.adapter.sink?.receive({
      ...original,
      messageId: 'h-numbers:edit',
      text: '@code please check the numbers MARKER-edit',
      at: at + 60_000,
      edit: { of: original.messageId, originalAt: at },
    });
    await h.bridge.idle();
    await h.adapter.say('hello everyone');
    await h.bridge.idle();

    expect(h.llm.requests.filter((r) => agentOf(r) === 'code')).toHaveLength(1);
    const data = h.llm.requests.filter((r) => agentOf(r) === 'data');
    expect(data.map(newestOf)).toEqual(['[@user]: please check the numbers', '[@user]: hello everyone']);
    const shown = data.flatMap((r) => roomMessagesOf(r).map((m) => String(m.content)));
    expect(shown.filter((text) => /MARKER-(edit|reply)/.test(text))).toEqual([]);
  });
});

describe('an agent that asks two humans', () => {
  it('is woken once by each human’s answer', async () => {
    await open({ agents: [{ name: 'code' }] });
    h.llm.respond((r) => {
      const situation = situationOf(r);
      if (situation.includes('@alice answered')) return { content: 'Noted, CSV from alice.' };
      if (situation.includes('@bob answered')) return { content: 'Noted, JSON from bob.' };
      return { content: '@alice @bob CSV or JSON?' };
    });
    await h.adapter.say('morning all', { user: 'bob' });
    await h.adapter.say('@code export the report', { user: 'alice' });
    await until(() => h.adapter.posts.length === 1);
    await h.adapter.say('CSV', { user: 'alice' });
    await until(() => h.adapter.posts.length === 2);
    await h.adapter.say('JSON', { user: 'bob' });
    await h.bridge.idle();

    expect(h.adapter.transcript()).toEqual([
      '[@code]: @alice @bob CSV or JSON?',
      '[@code]: Noted, CSV from alice.',
      '[@code]: Noted, JSON from bob.',
    ]);
  });
});

describe("a request's deadline", () => {
  it('posts one line naming who did not answer when it throws the late turn away', async () => {
    await open({ agents: [{ name: 'pm' }, { name: 'slow' }], env: { REPLY_TIMEOUT_S: '1' } });
    h.llm.respond((r) => {
      if (agentOf(r) === 'slow') return { hang: true };
      return resuming(r) ? { content: 'Going on without slow.' } : { content: '@slow your view?' };
    });
    await h.adapter.say('@pm decide');
    await until(() => h.adapter.transcript().includes('[@pm]: Going on without slow.'));
    await h.bridge.idle();

    const lines = h.adapter.transcript();
    expect(lines.filter((line) => line.startsWith('[@slow]'))).toEqual([]);
    const deadline = lines.filter((line) => line.startsWith('[system]: '));
    expect(deadline).toHaveLength(1);
    for (const part of [/#1\b/, /@pm\b/, /deadline/, /@slow\b/, /did not answer/]) expect(deadline[0]).toMatch(part);
    expect(lines.at(-1)).toBe('[@pm]: Going on without slow.');
  });
});

describe('/pass <agent> while it answers a request', () => {
  it("tells the requester's resume that the agent was stopped, not that it passed", async () => {
    await open({ agents: [{ name: 'pm' }, { name: 'y' }] });
    h.llm.respond((r) => {
      if (agentOf(r) === 'y') return { hang: true };
      return resuming(r) ? { content: 'Going on without y.' } : { content: '@y your view?' };
    });
    await h.adapter.say('@pm decide');
    await until(() => h.llm.requests.some((r) => agentOf(r) === 'y'));
    expect(await h.adapter.command('pass', 'y')).toBe('@y was stopped; the next agent may answer.');
    await h.bridge.idle();

    const resume = h.llm.requests.find((r) => agentOf(r) === 'pm' && resuming(r));
    expect(resume && situationOf(resume)).toMatch(/@y\b.*stopped/);
    expect(resume && situationOf(resume)).not.toContain('@y passed (nothing to add)');
  });
});

describe('a pass written loosely', () => {
  it('posts nothing for [pass]., `[pass]`, [pass] nothing to add, in any case', async () => {
    const replies: Record<string, string> = {
      a: '[pass].',
      b: '`[pass]`',
      c: '[pass] nothing to add',
      d: '[PASS] Nothing to add.',
    };
    await open({ agents: Object.keys(replies).map((name) => ({ name })) });
    h.llm.respond((r) => ({ content: replies[agentOf(r)] ?? 'unexpected' }));
    await h.adapter.say('@a @b @c @d anything to add?');
    await h.bridge.idle();

    expect(h.llm.requests.map(agentOf)).toEqual(['a', 'b', 'c', 'd']);
    expect(h.adapter.transcript()).toEqual([]);
  });
});

describe('a quoted line', () => {
  it('does not wake the agent it names', async () => {
    await open({
      agents: [
        { name: 'eps', activation: 'mention' },
        { name: 'obs', activation: 'always' },
      ],
    });
    h.llm.respond(() => ({ content: '[pass]' }));
    await h.adapter.say('> @eps wrote: the build is green\nthanks, that helps');
    await h.bridge.idle();

    expect(h.llm.requests.map(agentOf)).toEqual(['obs']);
  });
});

describe('<world>pass</world> in code', () => {
  it('hands back when the reply is only the tag in a code span', async () => {
    await open({
      agents: [
        { name: 'data', activation: 'mention' },
        { name: 'obs', activation: 'always' },
      ],
    });
    h.llm.respond((r) => ({ content: agentOf(r) === 'data' ? '`<world>pass</world>`' : 'obs goes on' }));
    await h.adapter.say('@data anything else?');
    await h.bridge.idle();

    expect(h.adapter.transcript()).toEqual(['[system]: @human data is passing control to you']);
  });

  it('posts the tag as literal text inside a longer fenced block, and does not hand back', async () => {
    await open({ agents: [{ name: 'data', activation: 'mention' }] });
    const reply = 'To stop the agents, write:\n```\n<world>pass</world> when you are done\n```';
    h.llm.respond(() => ({ content: reply }));
    await h.adapter.say('@data how do agents hand back?');
    await h.bridge.idle();

    expect(h.adapter.transcript()).toEqual([`[@data]: ${reply}`]);
  });
});

describe('messages an agent posts by send_channel_message', () => {
  it('count toward TURN_LIMIT: at most 4 agent messages in a row, then one hand-back with the right count', async () => {
    await open({
      agents: [
        { name: 'news', activation: 'always', tools: ['send_channel_message'] },
        { name: 'chat', activation: 'always' },
      ],
      env: { TURN_LIMIT: '4' },
    });
    let remarks = 0;
    h.llm.respond((r) => {
      if (agentOf(r) === 'chat') return { content: `Remark ${++remarks} on that.` };
      if (r.messages.some((m) => m.role === 'tool')) return { content: 'That is all from news.' };
      if (!newestOf(r).startsWith('[@user]:')) return { content: '[pass]' };
      return {
        toolCalls: [1, 2, 3].map((n) => ({
          name: 'send_channel_message',
          arguments: { channel: '#room', message: `Update ${n}: item ${n} is done.` },
        })),
      };
    });
    await h.adapter.say('what is new?');
    await h.bridge.idle();

    const lines = h.adapter.transcript();
    let run = 0;
    let longest = 0;
    for (const line of lines) {
      run = line.startsWith('[@') ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    expect(longest).toBeLessThanOrEqual(4);
    const handBacks = lines.filter((line) => /agent messages in a row/.test(line));
    expect(handBacks).toEqual([expect.stringMatching(/^\[system\]: @human 4 agent messages in a row/)]);
    expect(lines.at(-1)).toBe(handBacks[0]);
  });
});
