import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentOf, type Harness, roomMessagesOf, startHarness } from '../helpers/harness.js';
import { history, turnState } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';

let h: Harness;
afterEach(async () => h?.close());

const twoAlways = [
  { name: 'alice', activation: 'always' as const },
  { name: 'bob', activation: 'always' as const },
];

describe('turn limit', () => {
  it('stops two always agents after TURN_LIMIT consecutive messages and hands control back', async () => {
    h = await startHarness({ agents: twoAlways, env: { TURN_LIMIT: '5' } });
    let n = 0;
    h.llm.respond((request) => ({ content: `${agentOf(request)} says ${++n}` }));
    await h.adapter.say('talk among yourselves');
    await h.bridge.idle();
    const transcript = h.adapter.transcript();
    expect(transcript).toHaveLength(6);
    expect(transcript.slice(0, 5)).toEqual([
      '[@alice]: alice says 1',
      '[@bob]: bob says 2',
      '[@alice]: alice says 3',
      '[@bob]: bob says 4',
      '[@alice]: alice says 5',
    ]);
    expect(transcript[5]).toMatch(/^\[system\]: @human 5 agent messages in a row: .*control is back with you/);
    const room = await h.store.rooms.open('test', 'room');
    expect(await turnState(h.store, room.platform, room.channel)).toEqual({
      consecutive: 0,
      control: 'humans',
      reason: 'turn limit',
    });
    expect(h.llm.requests).toHaveLength(5);

    // A human message resets the count: the agents get a fresh 5.
    await h.adapter.say('go on');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toHaveLength(12);
    expect(h.adapter.posts.filter((p) => p.agent === null)).toHaveLength(2);
  });

  it('counts a long exchange only once per message, however many times it is echoed', async () => {
    h = await startHarness({ agents: twoAlways, env: { TURN_LIMIT: '3' } });
    h.llm.respond(() => ({ content: 'hi' }));
    await h.adapter.say('start');
    await h.bridge.idle();
    // Redeliver every agent post (another bot in the room saw it too).
    for (const post of [...h.adapter.posts]) {
      if (!post.agent) continue;
      await h.adapter.sink?.receive({
        platform: 'test',
        channel: 'room',
        messageId: post.id,
        author: { id: `bot-${post.agent}`, name: post.agent, kind: 'agent' },
        text: post.text,
      });
    }
    await h.bridge.idle();
    expect(h.adapter.transcript().filter((l) => l.startsWith('[@'))).toHaveLength(3);
    expect(await history(h.store, 'test', 'room', 50)).toHaveLength(5); // human, 3 agents, hand-back
  });
});

describe('[pass] and <world>pass</world>', () => {
  it('asks the next candidate when one passes, and hands over to the humans when all pass', async () => {
    h = await startHarness({ agents: twoAlways });
    h.llm.respond((request) => ({ content: agentOf(request) === 'alice' ? '[pass]' : 'bob here' }));
    await h.adapter.say('anyone?');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@bob]: bob here']);
    // After bob: alice is asked (always), passes; nobody else; the humans' turn.
    expect(h.llm.requests.map(agentOf)).toEqual(['alice', 'bob', 'alice']);
  });

  it('posts a reply without its <world>pass</world> tag, then the hand-back line; resets the counter and ends the loop', async () => {
    h = await startHarness({ agents: twoAlways });
    h.llm.respond((request) =>
      agentOf(request) === 'alice' ? { content: 'Done here. <world>pass</world>' } : { content: 'never asked' },
    );
    await h.adapter.say('finish up');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@alice]: Done here.',
      '[system]: @human alice is passing control to you',
    ]);
    expect(h.llm.requests.map(agentOf)).toEqual(['alice']);
    const room = await h.store.rooms.open('test', 'room');
    expect(await turnState(h.store, room.platform, room.channel)).toMatchObject({
      consecutive: 0,
      control: 'humans',
      reason: 'world pass',
    });
  });
});

describe('one platform message, processed once', () => {
  it('answers a message delivered to several bots once', async () => {
    h = await startHarness({ agents: [{ name: 'alice', activation: 'mention' }] });
    h.llm.respond(() => ({ content: 'hello' }));
    await Promise.all([
      h.adapter.say('@alice hi', { id: 'same' }),
      h.adapter.say('@alice hi', { id: 'same' }),
      h.adapter.say('@alice hi', { id: 'same' }),
    ]);
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@alice]: hello']);
    expect(h.llm.requests).toHaveLength(1);
  });
});

describe('humans in control', () => {
  it("a human message drops the room's queued agent turns and the router decides afresh", async () => {
    h = await startHarness({ agents: twoAlways, env: { TURN_LIMIT: '50' } });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let n = 0;
    h.llm.respond(async (request) => {
      n++;
      if (n === 1) await gate; // alice's first answer is slow
      const stopped = request.messages.some((m) => String(m.content).includes('STOP TALKING'));
      return { content: stopped ? '[pass]' : `${agentOf(request)} ${n}` };
    });
    await h.adapter.say('chat');
    await until(() => n === 1);
    await h.adapter.say('STOP TALKING');
    release();
    await h.bridge.idle();
    // alice's in-flight answer is posted, but the turn it would have queued (bob) is dropped;
    // the human's new message is routed and both agents pass on it.
    expect(h.adapter.transcript()).toEqual(['[@alice]: alice 1']);
    expect(h.llm.requests.map(agentOf)).toEqual(['alice', 'alice', 'bob']);
  });

  it('/pass by an operator stops the agent mid-turn and gives control to the humans', async () => {
    h = await startHarness({ agents: twoAlways });
    h.llm.respond(() => ({ hang: true }));
    await h.adapter.say('think hard');
    await until(() => h.llm.requests.length === 1);
    expect(await h.adapter.command('status')).toMatch(/Working: @alice/);
    expect(await h.adapter.command('pass')).toBe('Control is with the humans (1 agent turn stopped).');
    await h.bridge.idle();
    expect(h.adapter.posts).toEqual([]);
    expect(h.llm.requests.map(agentOf)).toEqual(['alice']);
    const room = await h.store.rooms.open('test', 'room');
    expect(await turnState(h.store, room.platform, room.channel)).toMatchObject({ control: 'humans', reason: '/pass' });
    expect(await h.adapter.command('status')).toMatch(/Working: nobody\n.*0 of 20\nControl: humans \(\/pass\)/);
  });

  it('/pass <agent> skips only that agent; the next candidate answers', async () => {
    h = await startHarness({ agents: twoAlways });
    h.llm.respond((request, index) =>
      agentOf(request) === 'alice'
        ? index === 0
          ? { hang: true }
          : { content: '[pass]' }
        : { content: 'bob answers' },
    );
    await h.adapter.say('question', {});
    await until(() => h.llm.requests.length === 1);
    expect(await h.adapter.command('pass', '@alice')).toBe('@alice was stopped; the next agent may answer.');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@bob]: bob answers']);
    expect(h.llm.requests.map(agentOf)).toEqual(['alice', 'bob', 'alice']);
  });

  it('refuses operator commands from non-operators and unknown agent names', async () => {
    h = await startHarness({ agents: twoAlways });
    expect(await h.adapter.command('pass', '', { operator: false })).toBe('Only operators can use /pass.');
    expect(await h.adapter.command('pass', 'carol')).toBe('There is no agent named @carol. Agents: @alice, @bob.');
  });

  it('/reset clears the counter and control state and removes the sandbox, keeping the workspace', async () => {
    h = await startHarness({ agents: twoAlways, env: { TURN_LIMIT: '2' } });
    h.llm.respond(() => ({ content: 'x' }));
    await h.adapter.say('go');
    await h.bridge.idle();
    const room = await h.store.rooms.open('test', 'room');
    expect((await turnState(h.store, room.platform, room.channel)).reason).toBe('turn limit');
    expect(await h.adapter.command('reset')).toMatch(/counter cleared, sandbox removed \(workspace kept\)/);
    expect(await turnState(h.store, room.platform, room.channel)).toEqual({ consecutive: 0, control: 'agents' });
    expect(await h.adapter.command('reset', 'workspace')).toMatch(/sandbox and workspace removed/);
    const sandbox = h.sandbox as import('../fakes/fake-sandbox.js').FakeSandbox;
    expect(sandbox.resets).toEqual([
      { channelKey: 'test:room', wipeWorkspace: false },
      { channelKey: 'test:room', wipeWorkspace: true },
    ]);
  });
});

describe('DMs', () => {
  it('a DM wakes only its agent, always, and the reply stays in the DM', async () => {
    h = await startHarness({
      agents: [
        { name: 'alice', activation: 'mention' },
        { name: 'bob', activation: 'always' },
      ],
    });
    h.llm.respond((request) => ({ content: `${agentOf(request)} in private` }));
    await h.adapter.say('no mention at all', { channel: 'dm-alice', direct: 'alice' });
    await h.bridge.idle();
    expect(h.adapter.transcript('dm-alice')).toEqual(['[@alice]: alice in private']);
    expect(h.llm.requests.map(agentOf)).toEqual(['alice']);
  });
});

describe('restart', () => {
  it('keeps history and counters and answers nothing twice', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-restart-'));
    try {
      h = await startHarness({ agents: twoAlways, env: { TURN_LIMIT: '10' }, storeFile: path.join(dir, 'rt.db') });
      let n = 0;
      h.llm.respond((request) => ({ content: ++n <= 3 ? `${agentOf(request)} ${n}` : '[pass]' }));
      await h.adapter.say('before the restart', { id: 'first' });
      await h.bridge.idle();
      const room = await h.store.rooms.open('test', 'room');
      expect(await turnState(h.store, room.platform, room.channel)).toEqual({ consecutive: 3, control: 'agents' });

      await h.restart();
      const asked = h.llm.requests.length;
      // The platform redelivers the old message after reconnecting: nothing happens.
      await h.adapter.say('before the restart', { id: 'first' });
      await h.bridge.idle();
      expect(h.llm.requests.length).toBe(asked);
      expect(await turnState(h.store, room.platform, room.channel)).toEqual({ consecutive: 3, control: 'agents' });

      await h.adapter.say('after the restart');
      await h.bridge.idle();
      const context = roomMessagesOf(h.llm.requests.at(-2) ?? { messages: [] }).map((m) => String(m.content));
      expect(context).toEqual([
        '[@user]: before the restart',
        expect.stringMatching(/\[@alice\]: alice 1|alice 1/),
        expect.stringMatching(/bob 2/),
        expect.stringMatching(/alice 3/),
        '[@user]: after the restart',
      ]);
    } finally {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
