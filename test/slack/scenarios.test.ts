import { afterEach, describe, expect, it } from 'vitest';
import type { FakeReply, RecordedRequest } from '../fakes/openai-server/index.js';
import type { FakeMessage } from '../fakes/slack/index.js';
import { agentOf, newestOf } from '../helpers/harness.js';
import { turnState } from '../helpers/store-views.js';
import { dataOf } from '../helpers/untrusted.js';
import { type SlackHarness, startSlackHarness } from './slack-harness.js';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const lastText = (request: RecordedRequest) => newestOf(request);

/** `[app]: text` for each message the apps posted, as the fake stores it (Slack markup included). */
function transcript(harness: SlackHarness, messages: readonly FakeMessage[]): string[] {
  return messages.map((message) => `[${harness.slack.workspace.appByBotUser(message.user)?.name}]: ${message.text}`);
}

describe('Slack scenarios through the bridge', () => {
  it('runs bash for a DM to @code and answers in the DM, unseen by the other agents', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'data', activation: 'always', control: true },
        { name: 'code', activation: 'mention', tools: ['bash'] },
      ],
    });
    const harness = h;
    harness.sandbox.onExec(() => ({ output: '42\n', exitCode: 0 }));
    harness.llm.respond((request) =>
      request.messages.at(-1)?.role === 'tool'
        ? { content: `The answer is ${dataOf(request.messages.at(-1)?.content).trim()}.` }
        : { toolCalls: [{ name: 'bash', arguments: { command: 'echo 42' } }] },
    );
    const dm = harness.slack.dm(harness.slack.app('code'), harness.alice);
    const sent = harness.slack.say(harness.alice, dm, 'what does echo 42 print?');
    await harness.settle(sent.ts);

    expect(transcript(harness, harness.slack.posts(dm))).toEqual(['[code]: The answer is 42.']);
    expect(harness.slack.posts(dm)[0]?.threadTs).toBeUndefined();
    expect(harness.sandbox.calls.map((call) => call.channelKey)).toEqual([`slack:${dm.id}`]);
    expect(new Set(harness.llm.requests.map(agentOf))).toEqual(new Set(['code']));
    expect(harness.slack.posts(harness.general)).toEqual([]);
  });

  it('answers a channel mention in a thread, and keeps the thread as its own room', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'data', activation: 'mention', control: true },
        { name: 'code', activation: 'mention' },
      ],
    });
    const harness = h;
    const code = harness.apps.code;
    harness.llm.respond((request) => ({ content: `${agentOf(request)} answers ${harness.llm.requests.length}` }));
    const asked = harness.slack.say(harness.alice, harness.general, `<@${code?.botUserId}> what is in the repo?`);
    await harness.settle(asked.ts);
    const followUp = harness.slack.say(harness.alice, harness.general, `<@${code?.botUserId}> and the tests?`, {
      threadTs: asked.ts,
    });
    await harness.settle(followUp.ts);
    const elsewhere = harness.slack.say(harness.alice, harness.general, `<@${code?.botUserId}> unrelated`);
    await harness.settle(elsewhere.ts);

    const posts = harness.slack.posts(harness.general);
    expect(posts.map((p) => [p.user, p.threadTs, p.text])).toEqual([
      [code?.botUserId, asked.ts, 'code answers 1'],
      [code?.botUserId, asked.ts, 'code answers 2'],
      [code?.botUserId, elsewhere.ts, 'code answers 3'],
    ]);
    expect(lastText(harness.llm.requests[0] as RecordedRequest)).toBe('[@Alice_Smith]: @code what is in the repo?');
    // The thread's second request sees the thread's history; the new top-level message starts afresh.
    const second = JSON.stringify((harness.llm.requests[1] as RecordedRequest).messages);
    const third = JSON.stringify((harness.llm.requests[2] as RecordedRequest).messages);
    expect(second).toContain('what is in the repo?');
    expect(third).not.toContain('what is in the repo?');
  });

  it('wakes the agent whose message a human answers in its thread, without a mention', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'data', activation: 'mention', control: true },
        { name: 'code', activation: 'mention' },
      ],
      env: { SLACK_REPLY_IN_THREAD: 'false' },
    });
    const harness = h;
    harness.llm.respond((request) => ({ content: `${agentOf(request)} answers ${harness.llm.requests.length}` }));
    const asked = harness.slack.say(harness.alice, harness.general, `<@${harness.apps.data?.botUserId}> status?`);
    await harness.settle(asked.ts);
    const answer = harness.slack.posts(harness.general)[0];
    expect(answer?.threadTs).toBeUndefined();

    const reply = harness.slack.say(harness.alice, harness.general, 'why so slow?', { threadTs: answer?.ts ?? '' });
    await harness.settle(reply.ts);
    expect(harness.llm.requests.map(agentOf)).toEqual(['data', 'data']);
    expect(harness.slack.posts(harness.general).at(-1)).toMatchObject({ threadTs: answer?.ts, text: 'data answers 2' });
  });

  it('wakes an agent that a human edit newly mentions, once', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'data', activation: 'mention', control: true },
        { name: 'code', activation: 'mention' },
      ],
    });
    const harness = h;
    harness.llm.respond((request) => ({ content: `${agentOf(request)} on it` }));
    const asked = harness.slack.say(harness.alice, harness.general, 'can someone check the numbers?');
    await harness.settle(asked.ts);
    expect(harness.llm.requests).toHaveLength(0);

    harness.slack.edit(asked, `<@${harness.apps.code?.botUserId}> can someone check the numbers?`);
    const edit = `${asked.ts}:edit:${asked.editedTs}`;
    await harness.settle(edit);
    harness.slack.edit(asked, `<@${harness.apps.code?.botUserId}> could someone check the numbers?`);
    await harness.settle(`${asked.ts}:edit:${asked.editedTs}`);
    expect(harness.llm.requests.map(agentOf)).toEqual(['code']);
    expect(lastText(harness.llm.requests[0] as RecordedRequest)).toBe(
      '[@Alice_Smith]: (edited) @code can someone check the numbers?',
    );
    expect(transcript(harness, harness.slack.posts(harness.general))).toEqual(['[code]: code on it']);
  });

  it('plays the example session with three apps, each speaking as itself', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'data', activation: 'always', control: true },
        { name: 'code', activation: 'mention', tools: ['bash'] },
        { name: 'reviewer', activation: 'always' },
      ],
    });
    const harness = h;
    harness.sandbox.onExec(() => ({ output: 'Acme 5200\nGlobex 3100\nInitech 900\n', exitCode: 0 }));
    harness.llm.respond((request): FakeReply => {
      const agent = agentOf(request);
      const last = request.messages.at(-1);
      const text = lastText(request);
      if (agent === 'data' && text.startsWith('[@Alice_Smith]:')) {
        return { content: '@code please load sales.csv and list the top 3 customers by **total revenue**.' };
      }
      if (agent === 'code' && last?.role === 'tool')
        return { content: `@data top 3:\n\`\`\`\n${dataOf(last.content)}\`\`\`` };
      if (agent === 'code' && text.includes('@code please load')) {
        return { toolCalls: [{ name: 'bash', arguments: { command: 'python3 top.py sales.csv' } }] };
      }
      if (agent === 'data' && text.includes('[@code]: @data top 3')) return { content: 'Acme leads with 5200.' };
      return { content: '[pass]' };
    });
    const { data, code } = harness.apps;
    const asked = harness.slack.say(
      harness.alice,
      harness.general,
      `<@${data?.botUserId}> who are our top 3 customers?`,
    );
    await harness.settle(asked.ts);

    expect(transcript(harness, harness.slack.posts(harness.general))).toEqual([
      `[data]: <@${code?.botUserId}> please load sales.csv and list the top 3 customers by *total revenue*.`,
      `[code]: <@${data?.botUserId}> top 3:\n\`\`\`\nAcme 5200\nGlobex 3100\nInitech 900\n\`\`\``,
      '[data]: Acme leads with 5200.',
    ]);
    expect(harness.slack.posts(harness.general).every((p) => p.threadTs === asked.ts)).toBe(true);
    const roomKey = `slack:${harness.general.id}/${asked.ts}`;
    expect(harness.sandbox.calls).toEqual([
      { channelKey: roomKey, command: 'python3 top.py sales.csv', timeoutMs: 30_000 },
    ]);
    // Every app received every message, yet the room holds each once.
    const room = await harness.store.rooms.open('slack', `${harness.general.id}/${asked.ts}`);
    expect((await harness.store.rooms.history(room.id, 50)).map((m) => `${m.kind}:${m.author}`)).toEqual([
      'human:Alice_Smith',
      'agent:data',
      'agent:code',
      'agent:data',
    ]);
    expect(harness.llm.requests.map(agentOf)).toContain('reviewer');
  });

  it('answers a re-delivered event (retry_attempt 1) once', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'always', control: true }] });
    const harness = h;
    harness.llm.respond(() => ({ content: 'hello back' }));
    const hello = harness.slack.say(harness.alice, harness.general, 'hello');
    await harness.settle(hello.ts);
    const first = harness.slack.deliveries.find(
      (d) => (d.envelope as { payload: { event: { ts?: string } } }).payload.event.ts === hello.ts,
    );

    harness.slack.redeliver(first?.envelopeId ?? '', { attempt: 1, reason: 'timeout' });
    const retried = harness.slack.deliveries.at(-1);
    await harness.slack.waitFor(
      () => harness.slack.acks.some((a) => a.envelopeId === retried?.envelopeId),
      5000,
      'ack',
    );
    await harness.bridge.idle();

    expect(retried?.envelope).toMatchObject({ retry_attempt: 1, retry_reason: 'timeout' });
    expect(transcript(harness, harness.slack.posts(harness.general))).toEqual(['[code]: hello back']);
    expect(harness.llm.requests).toHaveLength(1);
  });

  it('lets an operator /pass a running conversation and tells anyone else no, ephemerally', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'ping', activation: 'always', control: true },
        { name: 'pong', activation: 'always' },
      ],
    });
    const harness = h;
    let n = 0;
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    harness.llm.respond(async (request) => {
      n += 1;
      if (n === 3) await held; // the third turn is in flight when the commands arrive
      return { content: `${agentOf(request)} says ${n}` };
    });
    const start = harness.slack.say(harness.alice, harness.general, 'talk among yourselves');
    await harness.slack.waitFor(() => harness.llm.requests.length === 3, 10_000, 'third turn');

    harness.slack.slashCommand(harness.slack.app('ping'), {
      command: '/pass',
      user: harness.alice,
      channel: harness.general,
    });
    await harness.slack.waitFor(() => harness.slack.slashResponses.length === 1, 5000, 'refusal');
    harness.slack.slashCommand(harness.slack.app('ping'), {
      command: '/pass',
      user: harness.olga,
      channel: harness.general,
    });
    await harness.slack.waitFor(() => harness.slack.slashResponses.length === 2, 5000, 'pass');
    release?.();
    await harness.settle(start.ts);

    const [refused, passed] = harness.slack.slashResponses.map((r) => r.body);
    expect(refused).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('Only operators') });
    expect(passed).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringContaining('Control is with the humans'),
    });
    expect(transcript(harness, harness.slack.posts(harness.general))).toEqual([
      '[ping]: ping says 1',
      '[pong]: pong says 2',
    ]);
    const room = await harness.store.rooms.open('slack', `${harness.general.id}/${start.ts}`);
    expect((await turnState(harness.store, room.platform, room.channel)).control).toBe('humans');
  });

  it('lets an operator set /privacy on the control app (the command its manifest registers) and tells anyone else no', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'mention', control: true }] });
    const harness = h;
    const code = harness.slack.app('code');
    harness.slack.slashCommand(code, {
      command: '/privacy',
      text: 'mentions',
      user: harness.alice,
      channel: harness.general,
    });
    await harness.slack.waitFor(() => harness.slack.slashResponses.length === 1, 5000, 'refusal');
    harness.slack.slashCommand(code, {
      command: '/privacy',
      text: 'mentions',
      user: harness.olga,
      channel: harness.general,
    });
    await harness.slack.waitFor(() => harness.slack.slashResponses.length === 2, 5000, 'privacy set');
    harness.slack.slashCommand(code, { command: '/privacy', user: harness.olga, channel: harness.general });
    await harness.slack.waitFor(() => harness.slack.slashResponses.length === 3, 5000, 'privacy shown');

    const [refused, set, shown] = harness.slack.slashResponses.map((r) => r.body);
    expect(refused).toMatchObject({ response_type: 'ephemeral', text: expect.stringContaining('Only operators') });
    expect(set).toMatchObject({
      response_type: 'ephemeral',
      text: expect.stringMatching(/^Privacy in this room: mentions\./),
    });
    expect(shown).toEqual({ response_type: 'ephemeral', text: 'Privacy in this room: mentions.' });
  });

  it('accepts a signed HTTP event and rejects a badly signed or stale one', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'mention', control: true, http: true }] });
    const harness = h;
    const code = harness.apps.code;
    if (!code) throw new Error('no app');
    harness.llm.respond(() => ({ content: 'over HTTP' }));

    const asked = harness.slack.say(harness.alice, harness.general, `<@${code.botUserId}> are you there?`);
    await harness.settle(asked.ts);
    const forged = {
      type: 'message',
      channel: harness.general.id,
      channel_type: 'channel',
      user: harness.alice.id,
      text: `<@${code.botUserId}> forged`,
      ts: '1700000000.000100',
    };
    const bad = await harness.slack.postEvent(code, forged, { secret: 'not-the-secret' });
    const stale = await harness.slack.postEvent(code, forged, { timestampS: Math.floor(Date.now() / 1000) - 600 });
    await harness.bridge.idle();

    // The message, its app_mention and the echo of code's own reply, all acked with 200.
    expect(harness.slack.httpResults.map((r) => r.status)).toEqual([200, 200, 200]);
    expect([bad.status, stale.status]).toEqual([401, 401]);
    expect(transcript(harness, harness.slack.posts(harness.general))).toEqual(['[code]: over HTTP']);
    expect(harness.llm.requests).toHaveLength(1);
    expect(harness.adapter.received.map((e) => e.messageId)).toEqual([asked.ts]);
  });

  it('stops two always agents at the turn limit and hands control back through the control app', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'ping', activation: 'always', control: true },
        { name: 'pong', activation: 'always' },
      ],
      env: { TURN_LIMIT: '5' },
    });
    const harness = h;
    let n = 0;
    harness.llm.respond((request) => ({ content: `${agentOf(request)} says ${++n}` }));
    const start = harness.slack.say(harness.alice, harness.general, 'talk among yourselves');
    await harness.settle(start.ts);
    await harness.slack.waitFor(() => harness.slack.posts(harness.general).length >= 6, 5000, 'hand-back');
    await harness.bridge.idle();

    const lines = transcript(harness, harness.slack.posts(harness.general));
    expect(lines.slice(0, 5)).toEqual([
      '[ping]: ping says 1',
      '[pong]: pong says 2',
      '[ping]: ping says 3',
      '[pong]: pong says 4',
      '[ping]: ping says 5',
    ]);
    expect(lines[5]).toMatch(/^\[ping\]: @human 5 agent messages in a row/);
    expect(lines).toHaveLength(6);
    expect(harness.llm.requests).toHaveLength(5);
    expect(harness.slack.posts(harness.general).every((p) => p.threadTs === start.ts)).toBe(true);
  });
});
