/**
 * How the room decides who speaks, replayed on the fake Slack through the real adapter.
 * Before the room became one decision:
 * - a quoted line (`> @eps wrote: …`) wakes @eps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import type { FakeHuman, FakeMessage } from '../fakes/slack/index.js';
import { agentOf, newestOf, roomMessagesOf, situationOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { type SlackHarness, startSlackHarness } from './slack-harness.js';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a quoted line on Slack', () => {
  it('does not wake the agent it names', async () => {
    const harness = await startSlackHarness({
      agents: [
        { name: 'eps', activation: 'mention' },
        { name: 'obs', activation: 'always', control: true },
      ],
    });
    h = harness;
    harness.llm.respond(() => ({ content: '[pass]' }));
    // Slack sends a quote as `&gt;` and a mention as `<@U…>`.
    const eps = harness.apps.eps?.botUserId;
    const said = harness.slack.say(
      harness.alice,
      harness.general,
      `&gt; <@${eps}> wrote: the build is green\nthanks, that helps`,
    );
    await harness.settle(said.ts);

    expect(harness.llm.requests.map(agentOf)).toEqual(['obs']);
  });
});

describe('a human whose display name is an agent’s on Slack', () => {
  async function seat(): Promise<{ harness: SlackHarness; codefan: FakeHuman }> {
    const harness = await startSlackHarness({
      agents: [
        { name: 'pm', activation: 'mention', control: true },
        { name: 'code', activation: 'mention' },
      ],
      env: { SLACK_REPLY_IN_THREAD: 'false' },
    });
    h = harness;
    const codefan = harness.slack.addHuman('codefan', 'code');
    harness.slack.join(harness.general, codefan);
    return { harness, codefan };
  }
  const botTexts = (harness: SlackHarness) =>
    harness.slack
      .posts(harness.general)
      .filter((m) => m.botId !== undefined)
      .map((m) => m.text);
  const taken = (harness: SlackHarness, ts: string) => harness.adapter.received.some((e) => e.messageId === ts);

  it('is shown as @code_human, and never answers the request @code was asked', async () => {
    const { harness, codefan } = await seat();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    harness.llm.respond(async (r) => {
      if (agentOf(r) === 'code') {
        await held; // the agent @code is still writing when the human who goes by "code" speaks
        return { content: 'LGTM' };
      }
      if (situationOf(r).includes('has answered')) return { content: 'Thanks, merged.' };
      return { content: '@code please check the plan.' };
    });
    const pm = harness.apps.pm?.botUserId;
    const asked = harness.slack.say(harness.alice, harness.general, `<@${pm}> get the plan checked`);
    await until(() => harness.llm.requests.some((r) => agentOf(r) === 'code'));
    const spoke = harness.slack.say(codefan, harness.general, 'I think the plan is fine');
    await until(() => taken(harness, spoke.ts));
    release();
    await harness.settle(asked.ts);
    await until(() => botTexts(harness).length === 3);
    await harness.bridge.idle();

    const code = harness.apps.code?.botUserId;
    expect(botTexts(harness)).toEqual([`<@${code}> please check the plan.`, 'LGTM', 'Thanks, merged.']);
    const resume = harness.llm.requests.find((r) => situationOf(r).includes('has answered')) as RecordedRequest;
    expect(situationOf(resume)).toContain('LGTM');
    expect(situationOf(resume)).not.toContain('the plan is fine');
    const history = roomMessagesOf(resume).map((m) => String(m.content));
    expect(history).toContain('[@code_human]: I think the plan is fine');
    expect(history).toContain('[@code]: LGTM');
  });

  it('is mentioned as @code_human: a mention of them wakes no agent, and an agent’s @code_human pings them', async () => {
    const { harness, codefan } = await seat();
    harness.llm.respond(() => ({ content: '@code_human thanks for the review' }));
    const human = codefan.id;
    const pinged = harness.slack.say(harness.alice, harness.general, `<@${human}> can you double-check the plan?`);
    await harness.settle(pinged.ts);
    expect(harness.llm.requests).toHaveLength(0);

    const pm = harness.apps.pm?.botUserId;
    const thanked = harness.slack.say(harness.alice, harness.general, `<@${pm}> thank <@${human}>`);
    await harness.settle(thanked.ts);
    await until(() => botTexts(harness).length === 1);
    expect(harness.llm.requests.map(agentOf)).toEqual(['pm']);
    expect(newestOf(harness.llm.requests[0] as RecordedRequest)).toBe('[@Alice_Smith]: @pm thank @code_human');
    expect(botTexts(harness)).toEqual([`<@${human}> thanks for the review`]);
  });
});

describe('a thread under an agent’s channel message on Slack (SLACK_REPLY_IN_THREAD=false)', () => {
  it("gives the agent the thread's parent with the first reply it reads there, once", async () => {
    const harness = await startSlackHarness({
      agents: [{ name: 'pm', activation: 'mention', control: true }],
      env: { SLACK_REPLY_IN_THREAD: 'false' },
    });
    h = harness;
    harness.llm.respond(() =>
      harness.llm.requests.length === 1 ? { content: 'Q3 revenue is 42k, up 5%.' } : { content: 'It is the sum.' },
    );
    const pm = harness.apps.pm?.botUserId;
    const asked = harness.slack.say(harness.alice, harness.general, `<@${pm}> what is Q3 revenue?`);
    await harness.settle(asked.ts);
    await until(() => harness.slack.posts(harness.general).some((m) => m.botId !== undefined));
    const parent = harness.slack.posts(harness.general).find((m) => m.botId !== undefined) as FakeMessage;
    expect(parent.threadTs).toBeUndefined();

    const first = harness.slack.say(harness.alice, harness.general, 'how was it computed?', { threadTs: parent.ts });
    await harness.settle(first.ts);
    await until(() => harness.llm.requests.length === 2);
    const history = (r: RecordedRequest) =>
      roomMessagesOf(r)
        .map((m) => String(m.content))
        .join('\n');
    expect(history(harness.llm.requests[1] as RecordedRequest)).toContain('> pm: Q3 revenue is 42k, up 5%.');
    // Known from its post: no read of Slack's (tightly rate-limited) thread history was spent on it.
    expect(harness.slack.calls('conversations.replies')).toEqual([]);

    const second = harness.slack.say(harness.alice, harness.general, 'and Q4?', { threadTs: parent.ts });
    await harness.settle(second.ts);
    await until(() => harness.llm.requests.length === 3);
    expect(history(harness.llm.requests[2] as RecordedRequest).split('Q3 revenue is 42k').length).toBe(2);
    expect(newestOf(harness.llm.requests[2] as RecordedRequest)).toBe('[@Alice_Smith]: and Q4?');
  });

  it('reads the parent from Slack when it was posted before the bridge started', async () => {
    const harness = await startSlackHarness({
      agents: [{ name: 'pm', activation: 'mention', control: true }],
      env: { SLACK_REPLY_IN_THREAD: 'false' },
    });
    h = harness;
    harness.llm.respond(() =>
      harness.llm.requests.length === 1 ? { content: 'Q3 revenue is 42k, up 5%.' } : { content: 'It is the sum.' },
    );
    const pm = harness.apps.pm?.botUserId;
    const asked = harness.slack.say(harness.alice, harness.general, `<@${pm}> what is Q3 revenue?`);
    await harness.settle(asked.ts);
    await until(() => harness.slack.posts(harness.general).some((m) => m.botId !== undefined));
    const parent = harness.slack.posts(harness.general).find((m) => m.botId !== undefined) as FakeMessage;
    await harness.down();
    await harness.up();

    const reply = harness.slack.say(harness.alice, harness.general, 'how was it computed?', { threadTs: parent.ts });
    await harness.settle(reply.ts);
    await until(() => harness.llm.requests.length === 2);
    const history = roomMessagesOf(harness.llm.requests[1] as RecordedRequest).map((m) => String(m.content));
    expect(history.join('\n')).toContain('> pm: Q3 revenue is 42k, up 5%.');
  });
});
