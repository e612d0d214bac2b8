import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { type CrashHarness, startCrashHarness } from '../helpers/crash-harness.js';
import { agentOf, situationOf } from '../helpers/harness.js';
import { history, requests } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';
import { dataOf } from '../helpers/untrusted.js';

let h: CrashHarness;
afterEach(async () => h?.close());

/** The newest human line the model was shown. */
const lastHuman = (request: RecordedRequest) =>
  String(
    [...request.messages].reverse().find((m) => m.role === 'user' && /^\[@alice\]/.test(String(m.content)))?.content ??
      '',
  ).replace(/^\[@alice\]: /, '');

const never = () => new Promise<never>(() => {});

const transcript = async () =>
  (await history(h.store, 'test', 'room', 5000)).map((m) => `${m.kind}:${m.author}:${m.content}`);

describe('after a crash, the work in flight is resumed exactly once', () => {
  it('answers a message whose turn a crash cut (once, after the restart)', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    let first = true;
    h.llm.respond(async (request) => {
      if (first) {
        first = false;
        return never(); // the model is still thinking when the bridge dies
      }
      return { content: `re: ${lastHuman(request)}` };
    });
    await h.platform.say('@code hello?');
    await until(() => h.llm.requests.length === 1);
    await h.restart();
    await until(() => h.platform.posts().length === 1);
    await h.bridge.idle();
    expect(h.platform.transcript()).toEqual(['[alice]: @code hello?', '[@code]: re: @code hello?']);
    expect(h.llm.requests).toHaveLength(2);
    expect(await transcript()).toEqual(['human:alice:@code hello?', 'agent:code:re: @code hello?']);
  });

  it('records a reply that reached the platform before the crash, and never posts it again', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    h.llm.respond((request) => ({ content: `re: ${lastHuman(request)}` }));
    h.platform.crashOnPost = (message) => message.agent === 'code';
    await h.platform.say('@code hello?');
    await until(() => h.platform.posts().length === 1); // posted; the bridge died before it heard back
    await h.restart();
    await h.bridge.idle();
    await h.restart(); // and once more, for good measure
    await h.bridge.idle();
    expect(h.platform.transcript()).toEqual(['[alice]: @code hello?', '[@code]: re: @code hello?']);
    expect(h.llm.requests).toHaveLength(1);
    expect(await transcript()).toEqual(['human:alice:@code hello?', 'agent:code:re: @code hello?']);
  });

  it('answers an open request once over several restarts, and resumes its requester once', async () => {
    h = await startCrashHarness({ agents: [{ name: 'lead' }, { name: 'helper' }] });
    h.llm.respond((request) => {
      const agent = agentOf(request);
      if (agent === 'lead' && situationOf(request).includes('answers')) return { content: 'Thanks, done.' };
      if (agent === 'lead') return { content: '@helper what is 6 times 7?' };
      return { content: '42, @lead.' };
    });
    h.platform.crashOnPost = (message) => message.agent === 'helper';
    await h.platform.say('@lead please find out 6 times 7');
    await until(() => h.platform.posts().some((p) => p.agent === 'helper'));
    for (let i = 0; i < 3; i++) {
      await h.restart();
      await h.bridge.idle();
    }
    expect(h.platform.transcript()).toEqual([
      '[alice]: @lead please find out 6 times 7',
      '[@lead]: @helper what is 6 times 7?',
      '[@helper]: 42, @lead.',
      '[@lead]: Thanks, done.',
    ]);
    expect(h.llm.requests.map(agentOf)).toEqual(['lead', 'helper', 'lead']);
    const threads = await requests(h.store);
    expect(threads.map((t) => [t.requester, t.status, t.answers.length])).toEqual([['lead', 'closed', 1]]);
  });

  it('resumes a requester whose resume a crash cut', async () => {
    h = await startCrashHarness({ agents: [{ name: 'lead' }, { name: 'helper' }] });
    let cut = false;
    h.llm.respond(async (request) => {
      const agent = agentOf(request);
      if (agent === 'lead' && situationOf(request).includes('answers')) {
        if (!cut) {
          cut = true;
          return never();
        }
        return { content: 'Thanks, done.' };
      }
      if (agent === 'lead') return { content: '@helper what is 6 times 7?' };
      return { content: '42, @lead.' };
    });
    await h.platform.say('@lead please find out 6 times 7');
    await until(() => cut);
    await h.restart();
    await until(() => h.platform.posts().length === 3);
    await h.bridge.idle();
    expect(h.platform.transcript().at(-1)).toBe('[@lead]: Thanks, done.');
    expect(h.llm.requests.map(agentOf)).toEqual(['lead', 'helper', 'lead', 'lead']);
    expect((await requests(h.store)).map((t) => t.status)).toEqual(['closed']);
  });

  it('does not run again a command a cut turn had run, and tells the room', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code', tools: ['bash'] }] });
    let cut = false;
    h.llm.respond(async (request) => {
      const last = request.messages.at(-1);
      if (last?.role !== 'tool') return { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi >> log.txt' } }] };
      if (!cut) {
        cut = true;
        return never(); // the command ran; the bridge dies before the model's answer
      }
      return { content: `done: ${dataOf(last.content)}` };
    });
    h.sandbox.onExec(() => ({ output: 'appended', exitCode: 0 }));
    await h.platform.say('@code append a line to log.txt');
    await until(() => cut);
    await h.restart();
    await until(() => h.platform.posts().some((p) => p.agent === 'code'));
    await h.bridge.idle();
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['echo hi >> log.txt']);
    const posts = h.platform.transcript().slice(1);
    expect(posts).toHaveLength(2);
    expect(posts[0]).toMatch(
      /^\[system\]: @code's turn was cut by a restart after 1 tool call \(`echo hi >> log\.txt`\)/,
    );
    expect(posts[1]).toBe('[@code]: done: appended');
  });

  it('names a command a crash cut while it ran, in the room and in the note the model reads', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code', tools: ['bash'] }] });
    h.llm.respond(async (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { content: `done: ${dataOf(last.content)}` };
      if (situationOf(request).includes('cut by a restart')) return { content: 'I will not run it again.' };
      return { toolCalls: [{ name: 'bash', arguments: { command: 'make deploy' } }] };
    });
    let running = false;
    h.sandbox.onExec(() => {
      running = true;
      return never(); // the bridge dies while the command runs
    });
    await h.platform.say('@code deploy it');
    await until(() => running);
    await h.restart();
    await until(() => h.platform.posts().some((p) => p.agent === 'code'));
    await h.bridge.idle();
    const posts = h.platform.transcript().slice(1);
    expect(posts[0]).toBe(
      "[system]: @code's turn was cut by a restart after 1 tool call (`make deploy`); `make deploy` may have run only " +
        'in part. It continues now, and nothing that already ran is run again.',
    );
    expect(situationOf(h.llm.requests.at(-1) ?? { messages: [] })).toContain(
      '- `make deploy` (cut while running: it may have run in part)',
    );
  });

  it('gives up on a turn cut by restarts again and again, and says so once', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    h.llm.respond(never);
    await h.platform.say('@code hello?');
    for (let i = 1; i <= 3; i++) {
      await until(() => h.llm.requests.length === i);
      await h.restart();
    }
    await until(() => h.platform.posts().length === 1);
    await h.bridge.idle();
    expect(h.platform.transcript().at(-1)).toBe(
      "[system]: @code's turn was cut by 3 restarts and is not tried again. Mention @code to ask again.",
    );
    expect(h.llm.requests).toHaveLength(3);
  });
});

describe('after a restart, what was missed is caught up', () => {
  it('stores every message posted while the bridge was down, in order, and answers the newest once', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    h.llm.respond((request) => ({ content: `re: ${lastHuman(request)}` }));
    await h.platform.say('@code first');
    await until(() => h.platform.posts().length === 1);
    await h.bridge.idle();
    h.crash();
    for (let i = 1; i <= 1000; i++) await h.platform.say(`@code missed ${i}`);
    h.platform.onConnect = () => h.platform.say('@code live'); // right after the connection, before the catch-up
    await h.boot();
    await h.bridge.idle();
    const stored = (await transcript()).filter((line) => line.startsWith('human:'));
    expect(stored).toHaveLength(1002);
    expect(stored.slice(0, 3)).toEqual([
      'human:alice:@code first',
      'human:alice:@code missed 1',
      'human:alice:@code missed 2',
    ]);
    expect(stored.slice(-2)).toEqual(['human:alice:@code missed 1000', 'human:alice:@code live']);
    // The backlog is answered as one conversation: its newest state, once.
    expect(h.llm.requests.length).toBe(2);
    expect(h.platform.transcript().at(-1)).toBe('[@code]: re: @code live');
  });

  it('starts a catch-up from the newest message stored before the start, not from one stored since', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    h.llm.respond(() => ({ content: '[pass]' }));
    await h.platform.say('hello');
    await h.bridge.idle();
    const before = h.platform.messages.at(-1)?.id;
    await h.bridge.stop();
    await h.boot();
    const sink = (h.platform.connection as unknown as { sink: { lastMessageId(p: string, c: string): string } }).sink;
    await h.platform.say('a live message');
    await h.bridge.idle();
    expect(await h.store.rooms.lastPlatformMessageId('test', 'room')).not.toBe(before);
    expect(sink.lastMessageId('test', 'room')).toBe(before);
  });

  it('drops the cut round of a message that newer messages superseded', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    let first = true;
    h.llm.respond(async (request) => {
      if (first) {
        first = false;
        return never();
      }
      return { content: `re: ${lastHuman(request)}` };
    });
    await h.platform.say('@code one');
    await until(() => h.llm.requests.length === 1);
    h.crash();
    await h.platform.say('@code two');
    await h.platform.say('@code three');
    await h.boot();
    await until(() => h.platform.posts().length === 1);
    await h.bridge.idle();
    expect(h.platform.transcript().slice(-1)).toEqual(['[@code]: re: @code three']);
    expect(h.llm.requests).toHaveLength(2);
  });
});
