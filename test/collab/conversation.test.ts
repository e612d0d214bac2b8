/**
 * The common multi-agent moments, replayed as whole conversations through the bridge: several agents
 * addressed at once, agents asking humans, answers filed under the right request, world passes,
 * privacy, failures. Each was wrong before the rules moved into src/room.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, captureLogger, type Harness, newestOf, situationOf, startHarness } from '../helpers/harness.js';
import { requests } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';

let h: Harness;
afterEach(async () => h?.close());

/** The newest message the agent was shown (the last user/assistant message). */
const lastSeen = (r: RecordedRequest) => newestOf(r);
const sees = (r: RecordedRequest, marker: string) => JSON.stringify(r.messages).includes(marker);
const resuming = (r: RecordedRequest) =>
  /request #\d+ (has answered|reached its deadline|is settled)/.test(situationOf(r));

describe('a human who addresses several agents', () => {
  it('gets an answer from each, in the order named, each seeing the answers before it', async () => {
    h = await startHarness({ agents: [{ name: 'alpha' }, { name: 'beta' }] });
    h.llm.respond((r) => ({ content: `${agentOf(r)} thinks so` }));
    await h.adapter.say('@beta @alpha what do you each think?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@beta]: beta thinks so', '[@alpha]: alpha thinks so']);
    const [first, second] = h.llm.requests;
    expect(situationOf(first as RecordedRequest)).toContain('@user asked for your action');
    expect(situationOf(second as RecordedRequest)).toContain('@user asked for your action');
    expect(lastSeen(second as RecordedRequest)).toBe('[@beta]: beta thinks so');
  });

  it('lets one of them pass without posting, and the next still answers', async () => {
    h = await startHarness({ agents: [{ name: 'alpha' }, { name: 'beta' }] });
    h.llm.respond((r) => ({ content: agentOf(r) === 'alpha' ? '[pass]' : 'beta here' }));
    await h.adapter.say('@alpha @beta status?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@beta]: beta here']);
  });

  it('asks the addressed agents before the always agents, whatever the configured order', async () => {
    h = await startHarness({
      agents: [
        { name: 'data', activation: 'always' },
        { name: 'code', activation: 'mention' },
      ],
    });
    h.llm.respond((r) => ({ content: `${agentOf(r)} answers` }));
    await h.adapter.say('@code how many rows?');
    await h.bridge.idle();
    expect(h.llm.requests.map(agentOf)).toEqual(['code', 'data']);
    expect(situationOf(h.llm.requests[1] as RecordedRequest)).toContain('you were not asked directly');
  });

  it('drops addressed turns not yet started when a newer human message arrives', async () => {
    h = await startHarness({ agents: [{ name: 'alpha' }, { name: 'beta' }, { name: 'gamma' }] });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    h.llm.respond(async (r) => {
      if (agentOf(r) === 'alpha' && sees(r, 'first question')) await gate;
      return { content: `${agentOf(r)}: ${sees(r, 'never mind') && agentOf(r) === 'gamma' ? 'on it' : 'ok'}` };
    });
    await h.adapter.say('@alpha @beta first question');
    await until(() => h.llm.requests.length === 1);
    await h.adapter.say('never mind, @gamma instead');
    release();
    await h.bridge.idle();
    // alpha's answer in flight is posted; beta, not yet started, is never asked about the first question.
    expect(h.llm.requests.map(agentOf)).toEqual(['alpha', 'gamma']);
    expect(h.adapter.transcript()).toEqual(['[@alpha]: alpha: ok', '[@gamma]: gamma: on it']);
  });

  it('asks an agent addressed by the human and by an earlier answer once, for both', async () => {
    h = await startHarness({ agents: [{ name: 'alpha' }, { name: 'beta' }] });
    h.llm.respond((r) => {
      if (agentOf(r) === 'alpha') {
        return resuming(r) ? { content: 'Thanks, beta.' } : { content: 'I say yes. @beta do you agree?' };
      }
      return { content: 'I agree with alpha.' };
    });
    await h.adapter.say('@alpha @beta shall we ship?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@alpha]: I say yes. @beta do you agree?',
      '[@beta]: I agree with alpha.',
      '[@alpha]: Thanks, beta.',
    ]);
    expect(h.llm.requests.filter((r) => agentOf(r) === 'beta')).toHaveLength(1);
    expect(situationOf(h.llm.requests[1] as RecordedRequest)).toMatch(
      /@user and @alpha asked for your action \(request #1\)/,
    );
    expect((await requests(h.store)).map((t) => [t.requester, t.status, t.answers.map((a) => a.participant)])).toEqual([
      ['alpha', 'closed', ['beta']],
    ]);
  });
});

describe('an agent that asks a human', () => {
  it('is woken by that human’s next message, which carries no mention', async () => {
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.respond((r) =>
      situationOf(r).includes('@user answered the question you asked them')
        ? { content: 'Reading sales.csv now.' }
        : { content: '@user which file should I read?' },
    );
    await h.adapter.say('@code count the rows');
    await until(() => h.adapter.posts.length === 1);
    await h.adapter.say('sales.csv please');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@code]: @user which file should I read?',
      '[@code]: Reading sales.csv now.',
    ]);
    // Asking a human opens no request and no deadline.
    expect(await requests(h.store)).toEqual([]);
  });

  it('knows humans by display name, case-insensitively and in any script', async () => {
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.respond((r) =>
      situationOf(r).includes('@José answered') ? { content: 'Gracias.' } : { content: '@josé ¿qué archivo?' },
    );
    await h.adapter.say('@code ayuda', { user: 'José' });
    await until(() => h.adapter.posts.length === 1);
    await h.adapter.say('ventas.csv', { user: 'José' });
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@code]: @josé ¿qué archivo?', '[@code]: Gracias.']);
  });

  it('does not wait for the human it answers: naming them in the answer is the answer', async () => {
    h = await startHarness({ agents: [{ name: 'code' }] });
    h.llm.respond(() => ({ content: '@user there are 42 rows.' }));
    await h.adapter.say('@code count the rows');
    await h.adapter.say('thanks, talking to the team now');
    await h.bridge.idle();
    expect(h.llm.requests).toHaveLength(1);
  });
});

describe('answers reach their request', () => {
  it('files a nested answer under its own request, and the outer requester resumes without waiting', async () => {
    h = await startHarness({
      agents: [{ name: 'pm' }, { name: 'writer' }, { name: 'expert' }],
      env: { REPLY_TIMEOUT_S: '600' },
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      const system = situationOf(r);
      if (agent === 'pm')
        return resuming(r) ? { content: 'Both done, shipping.' } : { content: '@writer @expert draft and check it' };
      if (agent === 'writer') {
        return resuming(r) ? { content: 'Draft ready, expert agrees.' } : { content: '@expert is the intro right?' };
      }
      // expert: its answer depends on which request its turn is for.
      return system.includes('request #2') ? { content: 'The intro is right.' } : { content: 'The numbers check out.' };
    });
    await h.adapter.say('@pm get the article done');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@pm]: @writer @expert draft and check it',
      '[@writer]: @expert is the intro right?',
      '[@expert]: The numbers check out.',
      '[@expert]: The intro is right.',
      '[@writer]: Draft ready, expert agrees.',
      '[@pm]: Both done, shipping.',
    ]);
    const threads = await requests(h.store);
    expect(
      threads.map((t) => [t.id, t.requester, t.status, t.answers.map((a) => `${a.participant}: ${a.text}`)]),
    ).toEqual([
      [1, 'pm', 'closed', ['expert: The numbers check out.', 'writer: Draft ready, expert agrees.']],
      [2, 'writer', 'closed', ['expert: The intro is right.']],
    ]);
    const pmResume = h.llm.requests.filter((r) => agentOf(r) === 'pm').at(-1) as RecordedRequest;
    expect(situationOf(pmResume)).not.toContain('Did not answer');
  });

  it('keeps several requesters apart when they ask the same agent in the same room', async () => {
    h = await startHarness({ agents: [{ name: 'lead' }, { name: 'pm' }, { name: 'writer' }] });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'writer')
        return { content: situationOf(r).includes('@pm asked') ? 'For pm: 3 pages.' : 'For lead: Friday.' };
      if (resuming(r)) return { content: `${agent} got it` };
      return { content: agent === 'lead' ? '@writer when is it due?' : '@writer how long is it?' };
    });
    await h.adapter.say('@lead @pm check with the writer');
    await h.bridge.idle();
    const byRequester = Object.fromEntries(
      (await requests(h.store)).map((t) => [t.requester, t.answers.map((a) => a.text)]),
    );
    expect(byRequester).toEqual({ lead: ['For lead: Friday.'], pm: ['For pm: 3 pages.'] });
    expect(h.adapter.transcript()).toContain('[@lead]: lead got it');
    expect(h.adapter.transcript()).toContain('[@pm]: pm got it');
  });

  it('files answers to requesters in two rooms under their own requests', async () => {
    h = await startHarness({
      agents: [
        { name: 'pm', tools: ['send_channel_message'] },
        { name: 'lead', tools: ['send_channel_message'] },
        { name: 'writer' },
      ],
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'writer')
        return { content: situationOf(r).includes('@pm asked') ? 'pm: the intro' : 'lead: the outro' };
      if (resuming(r)) return { content: `${agent} resumed with ${/- @writer: (.*)/.exec(situationOf(r))?.[1]}` };
      if (r.messages.some((m) => m.role === 'tool')) return { content: 'asked' };
      return {
        toolCalls: [
          {
            name: 'send_channel_message',
            arguments: { channel: '#desk', message: `@writer a question from ${agent}`, request_reply: ['writer'] },
          },
        ],
      };
    });
    await h.adapter.say('@pm ask the writer', { channel: 'a' });
    await h.adapter.say('@lead ask the writer', { channel: 'b' });
    await h.bridge.idle();
    expect(h.adapter.transcript('a')).toEqual(['[@pm]: asked', '[@pm]: pm resumed with pm: the intro']);
    expect(h.adapter.transcript('b')).toEqual(['[@lead]: asked', '[@lead]: lead resumed with lead: the outro']);
  });

  it('resumes a requester at its deadline with who did not answer, and stops the late turn', async () => {
    h = await startHarness({ agents: [{ name: 'pm' }, { name: 'slow' }], env: { REPLY_TIMEOUT_S: '1' } });
    h.llm.respond((r) => {
      if (agentOf(r) === 'slow') return { hang: true };
      return resuming(r) ? { content: 'Going on without slow.' } : { content: '@slow your view?' };
    });
    await h.adapter.say('@pm decide');
    await h.bridge.idle();
    // The late turn is thrown away, and the room is told who did not answer.
    expect(h.adapter.transcript()).toEqual([
      '[@pm]: @slow your view?',
      '[system]: Request #1 from @pm reached its deadline: @slow did not answer in time; @pm goes on without it.',
      '[@pm]: Going on without slow.',
    ]);
    const resume = h.llm.requests.find(resuming) as RecordedRequest;
    expect(situationOf(resume)).toContain('Did not answer: @slow');
  });
});

describe('<world>pass</world>', () => {
  it("posts the answer without the tag, opens no request with the answer's mentions, then hands back", async () => {
    h = await startHarness({ agents: [{ name: 'data' }, { name: 'code' }] });
    h.llm.respond((r) => ({
      content: agentOf(r) === 'data' ? 'Revenue rose 4%; @code can double-check later. <world>pass</world>' : 'never',
    }));
    await h.adapter.say('@data how did we do?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@data]: Revenue rose 4%; @code can double-check later.',
      '[system]: @human data is passing control to you',
    ]);
    expect(h.llm.requests.map(agentOf)).toEqual(['data']);
    expect(await requests(h.store)).toEqual([]);
  });

  it('still answers a human message that arrived while the agent was writing its hand-back', async () => {
    h = await startHarness({ agents: [{ name: 'data' }] });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    h.llm.respond(async (r) => {
      if (lastSeen(r).includes('summary')) {
        await gate;
        return { content: 'Summary: all good. <world>pass</world>' };
      }
      return { content: 'Sure, the chart is ready.' };
    });
    await h.adapter.say('@data summary please');
    await until(() => h.llm.requests.length === 1);
    await h.adapter.say('@data and the chart?');
    release();
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@data]: Summary: all good.',
      '[system]: @human data is passing control to you',
      '[@data]: Sure, the chart is ready.',
    ]);
  });

  it('posts only the hand-back line when the reply is only the tag', async () => {
    h = await startHarness({ agents: [{ name: 'data' }] });
    h.llm.respond(() => ({ content: '<world>pass</world>' }));
    await h.adapter.say('@data anything else?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[system]: @human data is passing control to you']);
  });
});

describe('privacy (PRIVACY=mentions)', () => {
  const agents = [
    { name: 'code', activation: 'mention' as const },
    { name: 'data', activation: 'always' as const },
  ];

  it('never wakes an always agent on a message it cannot see, and keeps the reply private', async () => {
    h = await startHarness({ agents, env: { PRIVACY: 'mentions' } });
    h.llm.respond((r) => ({ content: agentOf(r) === 'code' ? 'The password is MARKER-reply' : '[pass]' }));
    await h.adapter.say('@code MARKER-question what is the password?');
    await h.bridge.idle();
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
    await h.adapter.say('hello everyone');
    await h.bridge.idle();
    const data = h.llm.requests.filter((r) => agentOf(r) === 'data');
    expect(data).toHaveLength(1);
    expect(sees(data[0] as RecordedRequest, 'MARKER-question')).toBe(false);
    expect(sees(data[0] as RecordedRequest, 'MARKER-reply')).toBe(false);
    expect(lastSeen(data[0] as RecordedRequest)).toBe('[@user]: hello everyone');
  });

  it('is switched per room by an operator with /privacy, and the stored choice wins over PRIVACY', async () => {
    h = await startHarness({ agents, env: { PRIVACY: 'off' } });
    h.llm.respond(() => ({ content: '[pass]' }));
    expect(await h.adapter.command('privacy', 'mentions', { operator: false })).toMatch(/Only operators/);
    expect(await h.adapter.command('privacy', 'sometimes')).toMatch(/Use \/privacy mentions/);
    expect(await h.adapter.command('privacy', 'mentions')).toMatch(/Privacy in this room: mentions/);
    await h.adapter.say('@code MARKER-private');
    await h.bridge.idle();
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
    // After a restart the room keeps its setting.
    await h.restart();
    expect(await h.adapter.command('privacy')).toBe('Privacy in this room: mentions.');
    expect(await h.adapter.command('status')).toMatch(/Privacy: mentions/);
    expect(await h.adapter.command('privacy', 'off')).toMatch(/Privacy in this room: off/);
    await h.adapter.say('@code MARKER-public');
    await h.bridge.idle();
    expect(h.llm.requests.map(agentOf)).toEqual(['code', 'code', 'data']);
    expect(sees(h.llm.requests.at(-1) as RecordedRequest, 'MARKER-private')).toBe(false);
  });
});

describe("one agent's failure", () => {
  it('is one short line, and the other addressed agent still answers', async () => {
    h = await startHarness({ agents: [{ name: 'alpha' }, { name: 'beta' }] });
    h.llm.respond((r) =>
      agentOf(r) === 'alpha' ? { status: 500, errorMessage: 'model overloaded' } : { content: 'beta: all green' },
    );
    await h.adapter.say('@alpha @beta status?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[system]: @alpha could not answer: the model endpoint answered 500: model overloaded',
      '[@beta]: beta: all green',
    ]);
  });

  it('cannot keep a loop alive past TURN_LIMIT: error lines do not reset the count', async () => {
    h = await startHarness({
      agents: [
        { name: 'broken', activation: 'always' },
        { name: 'a', activation: 'always' },
        { name: 'b', activation: 'always' },
      ],
      env: { TURN_LIMIT: '6' },
    });
    let n = 0;
    h.llm.respond((r) => {
      if (agentOf(r) === 'broken') return { status: 500, errorMessage: 'down' };
      n++;
      return { content: `point ${n} from ${agentOf(r)}` };
    });
    await h.adapter.say('discuss');
    await h.bridge.idle();
    const agentPosts = h.adapter.posts.filter((p) => p.agent !== null);
    expect(agentPosts.length).toBeLessThanOrEqual(6);
    expect(h.adapter.transcript().at(-1)).toMatch(/^\[system\]: @human 6 agent messages in a row/);
    // The failing agent was asked once per human round, not at every agent message.
    expect(h.llm.requests.filter((r) => agentOf(r) === 'broken')).toHaveLength(1);
  });
});

describe('the debug log answers "why did my bot not answer?"', () => {
  it('logs routing decisions, passes, hand-backs, model calls with tokens, and tool runs — no bodies at info', async () => {
    const { logger, lines } = captureLogger();
    h = await startHarness({
      agents: [
        { name: 'code', tools: ['bash'] },
        { name: 'data', activation: 'always' },
      ],
      logger,
    });
    h.llm.respond((r) => {
      if (agentOf(r) === 'data') return { content: '[pass]' };
      if (lastSeen(r).includes('wrap up')) return { content: '<world>pass</world>' };
      if (r.messages.some((m) => m.role === 'tool')) return { content: 'Done.' };
      return { toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] };
    });
    await h.adapter.say('@code MARKER-body list the files');
    await h.bridge.idle();
    await h.adapter.say('@code wrap up');
    await h.bridge.idle();
    const routing = lines.find((l) => l.msg === 'routing');
    expect(routing).toMatchObject({ room: 'test:room', author: 'user', woken: ['code:addressed', 'data:always'] });
    expect(lines.some((l) => l.msg === 'passed' && l.agent === 'data')).toBe(true);
    const call = lines.find((l) => l.msg === 'llm call');
    expect(call).toMatchObject({ agent: 'code', model: 'code' });
    expect(typeof call?.ms).toBe('number');
    expect(typeof call?.tokensIn).toBe('number');
    expect(lines.find((l) => l.msg === 'tool run')).toMatchObject({
      agent: 'code',
      tool: 'bash',
      status: 'ok',
      exitCode: 0,
    });
    expect(lines.find((l) => l.msg === 'control handed back to the humans')).toMatchObject({ reason: 'world pass' });
    const info = lines.filter((l) => Number(l.level) >= 30);
    expect(JSON.stringify(info)).not.toContain('MARKER-body');
  });
});
