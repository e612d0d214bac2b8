import { afterEach, describe, expect, it } from 'vitest';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, roomMessagesOf } from '../helpers/harness.js';
import { type SlackHarness, startSlackHarness } from '../slack/slack-harness.js';

let h: DiscordHarness;
let s: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  await s?.close();
  s = undefined;
});

/** The newest human line the model was shown: what its reply answers. */
const trigger = (request: RecordedRequest) =>
  /message \d+/.exec(
    String(
      [...request.messages]
        .reverse()
        .find((m) => m.role === 'user' && /^\[@Alice[^\]]*\]: .*message \d+/.test(String(m.content)))?.content,
    ),
  )?.[0];

describe('a burst of human messages into one room', () => {
  it('is stored whole and in order, answered with far fewer model calls than messages, no reply twice', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', control: true }, { name: 'data' }] });
    h.llm.respond(async (request) => ({ content: `${agentOf(request)} re: ${trigger(request)}`, delayMs: 60 }));
    const count = 200;
    const sent = [];
    for (let i = 1; i <= count; i++) {
      // 100 a second; every message addresses @code, the last one @code and @data.
      const who =
        i === count
          ? `<@${h.discord.bot('code-bot').id}> <@${h.discord.bot('data-bot').id}>`
          : `<@${h.discord.bot('code-bot').id}>`;
      sent.push(h.discord.humanSays('general', 'alice', `${who} message ${i}`));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const last = sent.at(-1);
    if (!last) throw new Error('nothing sent');
    await h.discord.until(() =>
      h.discord
        .botMessages('general')
        .some((m) => m.content.startsWith('data re:') && m.content.endsWith(`message ${count}`)),
    );
    await h.settle(last.id);

    const room = await h.store.rooms.open('discord', h.discord.channel('general').id);
    const humans = (await h.store.rooms.history(room.id, 5000)).filter((m) => m.kind === 'human');
    expect(humans.map((m) => Number(/message (\d+)/.exec(m.content)?.[1]))).toEqual(
      Array.from({ length: count }, (_, i) => i + 1),
    );
    const replies = h.discord.botMessages('general').map((m) => m.content);
    // Each agent answers a message at most once.
    expect(new Set(replies).size).toBe(replies.length);
    // The agents the newest message addresses each answer it.
    expect(replies.filter((r) => r.endsWith(`message ${count}`)).map((r) => r.split(' ')[0])).toEqual(['code', 'data']);
    const perMessage = h.llm.requests.length / count;
    console.log(
      `burst of ${count} at 100/s: ${h.llm.requests.length} model calls (${perMessage.toFixed(2)} per message), ${replies.length} posts`,
    );
    expect(perMessage).toBeLessThan(0.25);
  });
});

describe('a burst into a room of agents that always answer', () => {
  it('never has an agent answer the same message twice, and keeps model calls well below one per message', async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'code', activation: 'always', control: true },
        { name: 'data', activation: 'always' },
      ],
      env: { TURN_LIMIT: '4' },
    });
    // The model answers the newest line it is shown that someone else wrote.
    h.llm.respond(async (request) => {
      const others = roomMessagesOf(request).filter((m) => m.role === 'user');
      const newest = String(others.at(-1)?.content).replace(/^\[@\w+\]: /, '');
      return { content: `${agentOf(request)} re: ${newest}`, delayMs: 60 };
    });
    const count = 200;
    let last: { id: string } | undefined;
    for (let i = 1; i <= count; i++) {
      last = h.discord.humanSays('general', 'alice', `message ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (!last) throw new Error('nothing sent');
    await h.settle(last.id);
    await h.bridge.idle();
    const replies = h.discord.botMessages('general').map((m) => m.content);
    const answers = replies.filter((r) => !r.startsWith('@human'));
    expect(new Set(answers).size).toBe(answers.length);
    expect(answers.some((r) => r.endsWith(`re: message ${count}`))).toBe(true);
    console.log(`always agents, burst of ${count}: ${h.llm.requests.length} model calls, ${replies.length} posts`);
    expect(h.llm.requests.length / count).toBeLessThan(0.3);
  });
});

describe('a burst into one Slack thread', () => {
  it('is stored whole and in order, answered with far fewer model calls than messages, no reply twice', async () => {
    s = await startSlackHarness({ agents: [{ name: 'code', control: true }, { name: 'data' }] });
    const slack = s;
    const code = slack.apps.code?.botUserId;
    const data = slack.apps.data?.botUserId;
    slack.llm.respond(async (request) => ({ content: `${agentOf(request)} re: ${trigger(request)}`, delayMs: 60 }));
    const count = 200;
    const opener = slack.slack.say(slack.alice, slack.general, 'a thread for the burst');
    await slack.settle(opener.ts);
    let last: { ts: string } | undefined;
    for (let i = 1; i <= count; i++) {
      const who = i === count ? `<@${code}> <@${data}>` : `<@${code}>`;
      last = slack.slack.say(slack.alice, slack.general, `${who} message ${i}`, { threadTs: opener.ts });
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (!last) throw new Error('nothing sent');
    await slack.slack.waitFor(
      () => slack.slack.posts(slack.general).some((m) => m.text === `data re: message ${count}`),
      20_000,
      'the answer to the last message',
    );
    await slack.settle(last.ts);
    const room = await slack.store.rooms.open('slack', `${slack.general.id}/${opener.ts}`);
    const humans = (await slack.store.rooms.history(room.id, 5000)).filter((m) => m.kind === 'human');
    expect(humans.map((m) => /message (\d+)/.exec(m.content)?.[1] ?? 'opener')).toEqual([
      'opener',
      ...Array.from({ length: count }, (_, i) => String(i + 1)),
    ]);
    const replies = slack.slack.posts(slack.general).map((m) => m.text);
    expect(new Set(replies).size).toBe(replies.length);
    expect(replies.filter((r) => r.endsWith(`message ${count}`)).sort()).toEqual([
      `code re: message ${count}`,
      `data re: message ${count}`,
    ]);
    const perMessage = slack.llm.requests.length / count;
    console.log(`slack burst of ${count} at 100/s: ${slack.llm.requests.length} model calls, ${replies.length} posts`);
    expect(perMessage).toBeLessThan(0.25);
  });
});
