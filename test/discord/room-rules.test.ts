/**
 * How the room decides who speaks, replayed on the fake Discord through the real adapter, judged only by what the
 * bots post and what the model was asked.
 * Each of these broke before the room became one decision (when the rules were spread over the shell):
 * - a rally between two always agents: with the human naming @ping it stops after three messages, no hand-back.
 * - a newer question from Bob to @b, while @a is busy, drops Alice's queued question to @a: she is never answered.
 * - a quoted line (`> @eps wrote: …`) wakes @eps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../fakes/discord/index.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, newestOf, roomMessagesOf, situationOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

/** The harnesses of the running test (a test that plays a conversation twice opens two). */
const opened: DiscordHarness[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((harness) => harness.close()));
});
async function open(options: Parameters<typeof startDiscordHarness>[0]): Promise<DiscordHarness> {
  const harness = await startDiscordHarness(options);
  opened.push(harness);
  return harness;
}

/** `[bot]: text` for each bot message in a channel, platform mentions written back as `@bot`. */
function botLines(h: DiscordHarness, channel: string): string[] {
  const name = (id: string) => h.discord.world.user(id)?.username ?? '?';
  return h.discord
    .botMessages(channel)
    .map(
      (m: FakeMessage) =>
        `[${name(m.authorId)}]: ${m.content.replace(/<@!?(\d+)>/g, (_, id: string) => `@${name(id)}`)}`,
    );
}

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

describe('a rally between two always agents on Discord', () => {
  async function play(opening: (h: DiscordHarness) => string): Promise<string[]> {
    const h = await open({
      agents: [
        { name: 'ping', activation: 'always', control: true },
        { name: 'pong', activation: 'always' },
      ],
      env: { TURN_LIMIT: '6' },
    });
    h.llm.respond(rallyPlayer());
    const served = h.discord.humanSays('general', 'alice', opening(h));
    await h.settle(served.id);
    return botLines(h, 'general');
  }

  it('runs to TURN_LIMIT and hands back when the human names one of them, as it does unnamed', async () => {
    const unnamed = await play(() => 'serve the rally');
    const named = await play((h) => `<@${h.discord.bot('ping-bot').id}> serve the rally`);
    expect(unnamed).toEqual([
      '[ping-bot]: @pong-bot shot 1 from ping',
      '[pong-bot]: @ping-bot shot 2 from pong',
      '[ping-bot]: @pong-bot shot 3 from ping',
      '[pong-bot]: @ping-bot shot 4 from pong',
      '[ping-bot]: @pong-bot shot 5 from ping',
      '[pong-bot]: @ping-bot shot 6 from pong',
      expect.stringMatching(/^\[ping-bot\]: @human 6 agent messages in a row/),
    ]);
    expect(named).toEqual(unnamed);
  });
});

describe('questions waiting for a busy agent on Discord', () => {
  it("keeps one human's question queued when another human asks someone else", async () => {
    const h = await open({
      agents: [
        { name: 'a', activation: 'mention', control: true },
        { name: 'b', activation: 'mention' },
      ],
      humans: [{ name: 'alice' }, { name: 'bob' }, { name: 'carol' }],
    });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    h.llm.respond(async (r) => {
      const situation = situationOf(r);
      if (situation.includes('@carol asked')) {
        await held; // @a is busy writing the summary meanwhile
        return { content: '@carol Summary: all on track.' };
      }
      if (situation.includes('@alice asked')) return { content: '@alice The ETA is Friday.' };
      if (situation.includes('@bob asked')) return { content: '@bob The budget is 10k.' };
      return { content: '[pass]' };
    });
    const mention = (bot: string) => `<@${h.discord.bot(bot).id}>`;
    const summary = h.discord.humanSays('general', 'carol', `${mention('a-bot')} please draft the summary`);
    await until(() => h.llm.requests.length === 1);
    const eta = h.discord.humanSays('general', 'alice', `${mention('a-bot')} what is the ETA?`);
    await h.received(eta.id);
    const budget = h.discord.humanSays('general', 'bob', `${mention('b-bot')} what is the budget?`);
    await h.received(budget.id);
    release();
    await h.settle(summary.id);

    const lines = botLines(h, 'general');
    expect(lines).toContain('[a-bot]: @carol Summary: all on track.');
    expect(lines).toContain('[a-bot]: @alice The ETA is Friday.');
    expect(lines).toContain('[b-bot]: @bob The budget is 10k.');
    expect(lines).toHaveLength(3);
  });
});

describe('a quoted line on Discord', () => {
  it('does not wake the agent it names', async () => {
    const h = await open({
      agents: [
        { name: 'eps', activation: 'mention' },
        { name: 'obs', activation: 'always', control: true },
      ],
    });
    h.llm.respond(() => ({ content: '[pass]' }));
    const eps = h.discord.bot('eps-bot').id;
    const said = h.discord.humanSays('general', 'alice', `> <@${eps}> wrote: the build is green\nthanks, that helps`);
    await h.settle(said.id);

    expect(h.llm.requests.map(agentOf)).toEqual(['obs']);
  });
});

describe('a human whose display name is an agent’s on Discord', () => {
  const names = {
    agents: [
      { name: 'pm', activation: 'mention' as const, control: true },
      { name: 'code', activation: 'mention' as const },
    ],
    humans: [
      { name: 'alice', nick: 'Alice' },
      { name: 'codefan', nick: 'code' },
    ],
  };

  it('is shown as @code_human, and never answers the request @code was asked', async () => {
    const h = await open(names);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    h.llm.respond(async (r) => {
      if (agentOf(r) === 'code') {
        await held; // the agent @code is still writing when the human who goes by "code" speaks
        return { content: 'LGTM' };
      }
      if (situationOf(r).includes('has answered')) return { content: 'Thanks, merged.' };
      return { content: '@code please check the plan.' };
    });
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> get the plan checked`);
    await until(() => h.llm.requests.some((r) => agentOf(r) === 'code'));
    const spoke = h.discord.humanSays('general', 'codefan', 'I think the plan is fine');
    await h.received(spoke.id);
    release();
    await h.settle(asked.id);

    expect(botLines(h, 'general')).toEqual([
      '[pm-bot]: @code-bot please check the plan.',
      '[code-bot]: LGTM',
      '[pm-bot]: Thanks, merged.',
    ]);
    const resume = h.llm.requests.find((r) => situationOf(r).includes('has answered'));
    expect(situationOf(resume as RecordedRequest)).toContain('LGTM');
    expect(situationOf(resume as RecordedRequest)).not.toContain('the plan is fine');
    const history = roomMessagesOf(resume as RecordedRequest).map((m) => String(m.content));
    expect(history).toContain('[@code_human]: I think the plan is fine');
    expect(history).toContain('[@code]: LGTM');
  });

  it('is mentioned as @code_human: a mention of them wakes no agent, and an agent’s @code_human pings them', async () => {
    const h = await open(names);
    h.llm.respond(() => ({ content: '@code_human thanks for the review' }));
    const human = h.discord.human('codefan').id;
    const pinged = h.discord.humanSays('general', 'alice', `<@${human}> can you double-check the plan?`);
    await h.settle(pinged.id);
    expect(h.llm.requests).toHaveLength(0);

    const thanked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> thank <@${human}>`);
    await h.settle(thanked.id);
    expect(h.llm.requests.map(agentOf)).toEqual(['pm']);
    expect(newestOf(h.llm.requests[0] as RecordedRequest)).toBe('[@Alice]: @pm thank @code_human');
    expect(h.discord.botMessages('general').map((m) => m.content)).toEqual([`<@${human}> thanks for the review`]);
  });
});
