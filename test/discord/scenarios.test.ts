import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../fakes/discord/index.js';
import type { FakeReply, RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, newestOf, situationOf } from '../helpers/harness.js';
import { dataOf } from '../helpers/untrusted.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

let h: DiscordHarness;
afterEach(async () => h?.close());

/** Polls a condition that fakes on the other side of a socket make true (bounded by the test timeout). */
async function eventually(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const lastText = (request: RecordedRequest) => newestOf(request);

/** `[@name]: text` for each bot message in a channel, with platform mentions shown as the fake stores them. */
function transcript(messages: readonly FakeMessage[]): string[] {
  return messages.map((message) => `[${h.discord.world.user(message.authorId)?.username}]: ${message.content}`);
}

const EXAMPLE_AGENTS = [
  { name: 'data', activation: 'always' as const, control: true },
  { name: 'code', activation: 'mention' as const, tools: ['bash' as const] },
  { name: 'reviewer', activation: 'always' as const },
];

describe('Discord scenarios through the bridge', () => {
  it('plays the example session with three bots, each speaking as itself', async () => {
    h = await startDiscordHarness({ agents: EXAMPLE_AGENTS });
    h.sandbox.onExec(() => ({ output: 'Acme 5200\nGlobex 3100\nInitech 900\n', exitCode: 0 }));
    h.llm.respond((request): FakeReply => {
      const agent = agentOf(request);
      const last = request.messages.at(-1);
      const text = lastText(request);
      if (agent === 'data' && text.startsWith('[@Alice]:')) {
        return { content: '@code please load sales.csv and list the top 3 customers by total revenue.' };
      }
      if (agent === 'code' && last?.role === 'tool') return { content: `@data top 3:\n${dataOf(last.content)}` };
      if (agent === 'code' && text.includes('@code please load')) {
        return { toolCalls: [{ name: 'bash', arguments: { command: 'python3 top.py sales.csv' } }] };
      }
      if (agent === 'data' && text.includes('[@code]: @data top 3')) return { content: 'Acme leads with 5200.' };
      return { content: '[pass]' };
    });
    const data = h.discord.bot('data-bot');
    const code = h.discord.bot('code-bot');
    const asked = h.discord.humanSays('general', 'alice', `<@${data.id}> who are our top 3 customers?`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 3);
    await h.settle(asked.id);

    expect(transcript(h.discord.botMessages('general'))).toEqual([
      `[data-bot]: <@${code.id}> please load sales.csv and list the top 3 customers by total revenue.`,
      `[code-bot]: <@${data.id}> top 3:\nAcme 5200\nGlobex 3100\nInitech 900`,
      '[data-bot]: Acme leads with 5200.',
    ]);
    const channel = h.discord.channel('general').id;
    expect(h.sandbox.calls).toEqual([
      { channelKey: `discord:${channel}`, command: 'python3 top.py sales.csv', timeoutMs: 30_000 },
    ]);
    // Every bot received every message, yet the room holds each once.
    const room = await h.store.rooms.open('discord', channel);
    expect((await h.store.rooms.history(room.id, 50)).map((message) => `${message.kind}:${message.author}`)).toEqual([
      'human:Alice',
      'agent:data',
      'agent:code',
      'agent:data',
    ]);
  });

  it('wakes a mention-only agent when a human mentions its bot by <@id>', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'mention' }, { name: 'data' }] });
    h.llm.respond((request) => ({ content: `${agentOf(request)} here` }));
    const quiet = h.discord.humanSays('general', 'carol', 'nobody is mentioned');
    await h.settle(quiet.id);
    expect(h.llm.requests).toHaveLength(0);

    const asked = h.discord.humanSays('general', 'carol', `hey <@!${h.discord.bot('code-bot').id}>, a question`);
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(asked.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toBe('[@carol]: hey @code, a question');
    expect(transcript(h.discord.botMessages('general'))).toEqual(['[code-bot]: code here']);
  });

  it('runs bash for a DM to @code and answers in the DM, unseen by the other agents', async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'data', activation: 'always' },
        { name: 'code', activation: 'mention', tools: ['bash'] },
      ],
    });
    h.sandbox.onExec(() => ({ output: '42\n', exitCode: 0 }));
    h.llm.respond((request) =>
      request.messages.at(-1)?.role === 'tool'
        ? { content: `The answer is ${dataOf(request.messages.at(-1)?.content).trim()}.` }
        : { toolCalls: [{ name: 'bash', arguments: { command: 'echo 42' } }] },
    );
    const sent = h.discord.dm('alice', 'code-bot', 'what does echo 42 print?');
    await h.discord.until(() => h.discord.botMessages(sent.channelId).length === 1);
    await h.settle(sent.id);

    expect(transcript(h.discord.botMessages(sent.channelId))).toEqual(['[code-bot]: The answer is 42.']);
    expect(h.sandbox.calls.map((call) => call.channelKey)).toEqual([`discord:${sent.channelId}`]);
    expect(new Set(h.llm.requests.map(agentOf))).toEqual(new Set(['code']));
    expect(h.discord.botMessages('general')).toEqual([]);
  });

  it('stops two always bots at the turn limit and hands control back through the control bot', async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'ping', activation: 'always', control: true },
        { name: 'pong', activation: 'always' },
      ],
      env: { TURN_LIMIT: '5' },
    });
    let n = 0;
    h.llm.respond((request) => ({ content: `${agentOf(request)} says ${++n}` }));
    const start = h.discord.humanSays('general', 'alice', 'talk among yourselves');
    await h.discord.until(() => h.discord.botMessages('general').length >= 6);
    await h.settle(start.id);

    const lines = transcript(h.discord.botMessages('general'));
    expect(lines.slice(0, 5)).toEqual([
      '[ping-bot]: ping says 1',
      '[pong-bot]: pong says 2',
      '[ping-bot]: ping says 3',
      '[pong-bot]: pong says 4',
      '[ping-bot]: ping says 5',
    ]);
    expect(lines[5]).toMatch(/^\[ping-bot\]: @human 5 agent messages in a row/);
    expect(lines).toHaveLength(6);
    expect(h.llm.requests).toHaveLength(5);
  });

  it("wakes the agent a human replies to, while an agent's reply to an agent starts no loop", async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'data', activation: 'mention' },
        { name: 'code', activation: 'mention' },
      ],
    });
    h.llm.respond((request) => ({ content: `${agentOf(request)} noted` }));
    // An agent bot replies to another agent's message: Discord pings the replied-to bot, but that asks nothing.
    const first = h.discord.botSays('general', 'data-bot', 'status report');
    const ping = h.discord.botSays('general', 'code-bot', 'thanks', { replyTo: first.id });
    expect(ping.mentionIds).toEqual([h.discord.bot('data-bot').id]);
    await h.settle(first.id);
    await h.settle(ping.id);
    expect(h.llm.requests).toHaveLength(0);
    // A human's reply to @code's message is a request to @code.
    const human = h.discord.humanSays('general', 'alice', 'what do you mean?', { replyTo: ping.id });
    await h.discord.until(() => h.discord.botMessages('general').length === 3);
    await h.settle(human.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['code']);
    expect(lastText(h.llm.requests[0] as RecordedRequest)).toBe('[@Alice]: what do you mean?');
    expect(transcript(h.discord.botMessages('general')).at(-1)).toBe('[code-bot]: code noted');
  });

  it('wakes an agent that a human edit newly mentions, once', async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'data', activation: 'mention' },
        { name: 'code', activation: 'mention' },
      ],
    });
    h.llm.respond((request) => ({ content: `${agentOf(request)} on it` }));
    const data = h.discord.bot('data-bot').id;
    const code = h.discord.bot('code-bot').id;
    const asked = h.discord.humanSays('general', 'alice', `<@${data}> check the build`);
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(asked.id);
    h.discord.humanEdits(asked, `<@${data}> <@${code}> check the build`);
    await h.discord.until(() => h.discord.botMessages('general').length === 2);
    h.discord.humanEdits(asked, `<@${data}> <@${code}> please check the build`);
    const marker = h.discord.humanSays('general', 'alice', 'thanks both');
    await h.settle(marker.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['data', 'code']);
    expect(lastText(h.llm.requests[1] as RecordedRequest)).toBe('[@Alice]: (edited) @data @code check the build');
  });

  it('answers a slash command whose interaction lacks a channel object, never with a database error', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'data', control: true }], operators: ['alice'] });
    const status = await h.discord.slash('data-bot', 'alice', 'general', 'status', {}, { channelObject: false });
    expect(status.content).toMatch(/Working: nobody/);
    const nowhere = await h.discord.slash(
      'data-bot',
      'alice',
      'general',
      'status',
      {},
      { channelObject: false, channelId: false },
    );
    expect(nowhere.content).not.toMatch(/constraint|SQL|failed/i);
  });

  it('/pass by an operator stops an agent mid-turn; a non-operator is refused', async () => {
    h = await startDiscordHarness({
      agents: [{ name: 'data', activation: 'always', control: true }],
      operators: ['alice'],
    });
    h.llm.respond(() => ({ hang: true }));
    const asked = h.discord.humanSays('general', 'carol', 'think hard');
    await h.received(asked.id);
    await eventually(() => h.llm.requests.length === 1);

    const refused = await h.discord.slash('data-bot', 'carol', 'general', 'pass');
    expect(refused).toMatchObject({ content: 'Only operators can use /pass.', ephemeral: true });
    const passed = await h.discord.slash('data-bot', 'alice', 'general', 'pass');
    expect(passed).toMatchObject({ content: 'Control is with the humans (1 agent turn stopped).', ephemeral: true });
    await h.bridge.idle();
    expect(h.discord.botMessages('general')).toEqual([]);
    const status = await h.discord.slash('data-bot', 'alice', 'general', 'status');
    expect(status.content).toMatch(/Working: nobody/);
  });

  it('posts a 3500-character reply with a code block as two valid chunks, one message to the router', async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'data', activation: 'mention' },
        { name: 'code', activation: 'mention' },
      ],
    });
    const code = Array.from({ length: 118 }, (_, i) => `print(${i})  # ${'x'.repeat(15)}`).join('\n');
    const reply = `@code here is the script:\n\`\`\`python\n${code}\n\`\`\`\nRun it please.`;
    expect(reply.length).toBeGreaterThan(3000);
    expect(reply.length).toBeLessThan(4000);
    // @data writes the long reply once; when @code (asked by the mention) passes, @data resumes and passes too.
    const resuming = (request: Parameters<typeof agentOf>[0]) => situationOf(request).includes('has answered');
    h.llm.respond((request) =>
      agentOf(request) === 'data' && lastText(request).startsWith('[@Alice]') && !resuming(request)
        ? { content: reply }
        : { content: '[pass]' },
    );
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('data-bot').id}> write it`);
    await h.discord.until(() => h.discord.botMessages('general').length === 2);
    await h.settle(asked.id);

    const chunks = h.discord.botMessages('general').map((message) => message.content);
    expect(chunks).toHaveLength(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(2000);
      expect(chunk.split('\n').filter((line) => line.startsWith('```')).length % 2).toBe(0);
    }
    expect(chunks[0]?.startsWith(`<@${h.discord.bot('code-bot').id}> here is the script:`)).toBe(true);
    expect(chunks[1]?.startsWith('```python\n')).toBe(true);
    // The mention in chunk 1 woke @code once; the room stored the reply as one message.
    expect(h.llm.requests.map(agentOf)).toEqual(['data', 'code', 'data']);
    const room = await h.store.rooms.open('discord', h.discord.channel('general').id);
    expect((await h.store.rooms.history(room.id, 50)).filter((message) => message.kind === 'agent')).toHaveLength(1);
  });

  it('stores each message posted during a gateway drop once, and answers the newest state once', async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'data', activation: 'always', control: true },
        { name: 'code', activation: 'mention' },
      ],
    });
    let n = 0;
    h.llm.respond((request) => (agentOf(request) === 'data' ? { content: `reply ${++n}` } : { content: '[pass]' }));
    const before = h.discord.humanSays('general', 'alice', 'before');
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(before.id);

    // data's bot resumes (Discord replays what it missed); code's bot must identify afresh and read the history.
    h.discord.dropGateway('data-bot', { resumable: true });
    h.discord.dropGateway('code-bot', { resumable: false });
    const missed = [h.discord.humanSays('general', 'alice', 'q1'), h.discord.humanSays('general', 'carol', 'q2')];
    await h.settle(missed[1]?.id ?? '');
    // q1 is answered on its own only when its turn started before q2 arrived; q2 always is.
    await h.discord.until(() => h.discord.botMessages('general').length >= 2);
    const afterDrop = h.discord.botMessages('general').length;
    const codeId = h.discord.bot('code-bot').id;
    const historyReads = () =>
      h.discord.requests.filter(
        (request) => request.method === 'GET' && request.path.endsWith('/messages') && request.botId === codeId,
      );
    await h.discord.until(() => historyReads().length > 0);
    const after = h.discord.humanSays('general', 'alice', 'after');
    await h.discord.until(() => h.discord.botMessages('general').length === afterDrop + 1);
    await h.settle(after.id);

    // Every human message reached the room once and got its one turn; nothing was answered twice.
    const room = await h.store.rooms.open('discord', h.discord.channel('general').id);
    const history = await h.store.rooms.history(room.id, 50);
    expect(history.filter((message) => message.kind === 'human').map((message) => message.content)).toEqual([
      'before',
      'q1',
      'q2',
      'after',
    ]);
    const replies = transcript(h.discord.botMessages('general'));
    expect(replies).toEqual(Array.from({ length: afterDrop + 1 }, (_, i) => `[data-bot]: reply ${i + 1}`));
    expect([3, 4]).toContain(replies.length);
    expect(h.llm.requests.map(agentOf).filter((agent) => agent === 'data')).toHaveLength(replies.length);
    // The newest missed message was answered, with q2 in view.
    expect(h.llm.requests.some((r) => agentOf(r) === 'data' && JSON.stringify(r.messages).includes('q2'))).toBe(true);
    // Both ways back were taken: data's bot resumed, code's bot read the channel history.
    const dataId = h.discord.bot('data-bot').id;
    expect(h.discord.identifies.filter((entry) => entry.botId === dataId).map((entry) => entry.op)).toEqual([
      'identify',
      'resume',
    ]);
    expect(historyReads().length).toBeGreaterThan(0);
  });

  it('answers a DM missed while the bridge was down when the newest thing the DM stored was an edit', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'ada' }, { name: 'bo' }] });
    h.llm.respond((r) => (newestOf(r).includes('are you there') ? { content: 'yes, here' } : { content: '[pass]' }));
    const first = h.discord.dm('alice', 'ada-bot', 'hello');
    await h.settle(first.id);
    // An edit that names someone new is stored as a message of its own, under an id of its own.
    h.discord.humanEdits(first, `hello <@${h.discord.bot('bo-bot').id}>`);
    await h.adapter.until(() => h.adapter.received.some((e) => e.messageId.startsWith(`${first.id}:edit:`)));
    await h.bridge.idle();
    const dm = h.discord.world.dmChannel(h.discord.human('alice').id, h.discord.bot('ada-bot').id);

    await h.down();
    h.discord.dm('alice', 'ada-bot', 'are you there?');
    await h.up();
    await h.discord.until(() => h.discord.botMessages(dm).length === 1);
    expect(h.discord.botMessages(dm).map((m) => m.content)).toEqual(['yes, here']);
  });

  it('answers what was said while the bridge was down, once, after it starts again', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'data', activation: 'always' }] });
    let n = 0;
    h.llm.respond(() => ({ content: `reply ${++n}` }));
    const first = h.discord.humanSays('general', 'alice', 'first');
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(first.id);

    await h.down();
    h.discord.humanSays('general', 'alice', 'while down');
    await h.up();
    await h.discord.until(() => h.discord.botMessages('general').length === 2);
    await h.bridge.idle();
    const after = h.discord.humanSays('general', 'alice', 'after');
    await h.discord.until(() => h.discord.botMessages('general').length === 3);
    await h.settle(after.id);

    expect(transcript(h.discord.messages('general'))).toEqual([
      '[alice]: first',
      '[data-bot]: reply 1',
      '[alice]: while down',
      '[data-bot]: reply 2',
      '[alice]: after',
      '[data-bot]: reply 3',
    ]);
    expect(h.llm.requests).toHaveLength(3);
  });
});
