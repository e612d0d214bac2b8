/**
 * Approvals on Discord through the fake (rule 17, docs/trust.md): a card in the room shows exactly what will run;
 * only the human who asked or an operator answers it (/approve, /deny); the call runs only once approved.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../fakes/discord/index.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf } from '../helpers/harness.js';
import { dataOf } from '../helpers/untrusted.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

let h: DiscordHarness;
afterEach(async () => h?.close());

const lastTool = (request: RecordedRequest) => {
  const last = request.messages.at(-1);
  return last?.role === 'tool' ? dataOf(last.content) : undefined;
};

async function start(command: string, env: Record<string, string> = {}): Promise<void> {
  h = await startDiscordHarness({
    agents: [
      { name: 'data', activation: 'mention', control: true },
      {
        name: 'code',
        activation: 'mention',
        tools: ['bash'],
        approvals: { modes: new Map([['bash', 'ask']]), bashAllow: ['ls*'], bashDeny: ['curl *'] },
      },
    ],
    operators: ['otto'],
    humans: [{ name: 'alice', nick: 'Alice' }, { name: 'carol' }, { name: 'otto' }],
    env,
  });
  h.sandbox.onExec((_room, command) => ({ output: `ran ${command}\n`, exitCode: 0 }));
  h.llm.respond((request) => {
    const result = lastTool(request);
    if (result !== undefined) return { content: `result: ${result.replace(/\s+/g, ' ').trim()}` };
    return { toolCalls: [{ name: 'bash', arguments: { command } }] };
  });
}

const channel = () => h.discord.channel('general').id;
const cardIn = (where: string) =>
  h.discord.botMessages(where).find((m) => m.content.startsWith('Approval needed [A1]'));
async function cardAsked(): Promise<{ card: FakeMessage; asked: FakeMessage }> {
  const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> clean the build folder`);
  await h.discord.until(() => cardIn('general') !== undefined);
  return { card: cardIn('general') as FakeMessage, asked };
}
const botTexts = () => h.discord.botMessages('general').map((m) => m.content);
const codeBot = () => h.discord.bot('code-bot');

describe('approvals on Discord', () => {
  it('holds a command until the human who asked approves it; another member cannot', async () => {
    await start('rm -rf build');
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> clean the build folder`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('Approval needed [A1]')));
    const card = botTexts().find((t) => t.startsWith('Approval needed [A1]')) ?? '';
    expect(card).toContain('```\nrm -rf build\n```');
    expect(card).toContain(`or an operator may answer with /approve A1 or /deny A1`);
    expect(h.sandbox.calls).toEqual([]);
    const status = await h.discord.slash('data-bot', 'otto', 'general', 'status');
    expect(status.content).toMatch(
      /Approval A1: @code's bash waits for @Alice or an operator until \d\d:\d\d:\d\d UTC/,
    );

    const byCarol = await h.discord.slash('data-bot', 'carol', 'general', 'approve', { id: 'A1' });
    expect(byCarol.content).toBe('Only @Alice (who asked) or an operator can answer A1.');
    expect(h.sandbox.calls).toEqual([]);
    const byAlice = await h.discord.slash('data-bot', 'alice', 'general', 'approve', { id: 'a1' });
    expect(byAlice.content).toBe('A1 approved.');
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['rm -rf build']);
    expect(botTexts().at(-1)).toBe('result: ran rm -rf build');
    expect(botTexts()).toContain(`alice approved A1: <@${codeBot().id}> runs it.`);
    // Answered, the card is closed (an edit by the bot that posted it): how it ended, and no buttons.
    await h.discord.until(() =>
      botTexts().some((t) => t.startsWith('Approval [A1]') && t.endsWith('Approved by alice.')),
    );
    const closed = h.discord.botMessages('general').find((m) => m.content.startsWith('Approval [A1]'));
    expect(closed?.components).toEqual([]);
    expect(closed?.content).toContain('```\nrm -rf build\n```');
  });

  it('gives the model the denial, and runs nothing, when an operator denies', async () => {
    await start('rm -rf build');
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> clean up`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('Approval needed [A1]')));
    const denied = await h.discord.slash('data-bot', 'otto', 'general', 'deny', { id: 'A1' });
    expect(denied.content).toBe('A1 denied.');
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls).toEqual([]);
    expect(botTexts().at(-1)).toBe('result: [ERROR: not approved: otto denied it]');
  });

  it('follows approvals read again from the agent file from the next turn, without a restart', async () => {
    await start('make test');
    const agents = h.config.agents.map((a) => (a.name === 'code' ? { ...a, approvals: undefined } : a));
    h.bridge.applyPolicy({ settings: h.config.settings, agents });
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> run the tests`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['make test']);
    expect(botTexts().some((t) => t.startsWith('Approval needed'))).toBe(false);
  });

  it("answers another human's question while a card waits, then runs the approved call (the turn taken again)", async () => {
    await start('make deploy');
    h.llm.respond((request) => {
      if (agentOf(request) === 'data') return { content: 'It is noon.' };
      const result = lastTool(request);
      if (result !== undefined) return { content: `result: ${result.replace(/\s+/g, ' ').trim()}` };
      return { toolCalls: [{ name: 'bash', arguments: { command: 'make deploy' } }] };
    });
    const { asked } = await cardAsked();
    const dataBot = h.discord.bot('data-bot');
    const other = h.discord.humanSays('general', 'carol', `<@${dataBot.id}> what time is it?`);
    await h.discord.until(() => botTexts().includes('It is noon.'));
    await h.settle(other.id);
    expect(h.sandbox.calls).toEqual([]);
    const byAlice = await h.discord.slash('data-bot', 'alice', 'general', 'approve', { id: 'A1' });
    expect(byAlice.content).toBe('A1 approved.');
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['make deploy']);
    expect(botTexts().filter((t) => /^Approval (needed )?\[A\d+\]/.test(t))).toHaveLength(1);
    expect(botTexts().at(-1)).toBe('result: ran make deploy');
  });

  it('runs bash_allow commands without a card, refuses bash_deny and the floor without one', async () => {
    await start('ls -la');
    const listed = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> list`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(listed.id);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['ls -la']);
    expect(botTexts().some((t) => t.startsWith('Approval needed'))).toBe(false);
  });

  it('never runs a command that wipes the workspace, whatever the rules say', async () => {
    await start('rm -rf /workspace');
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> start over`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls).toEqual([]);
    expect(botTexts().at(-1)).toContain('this command is never run: it would wipe the workspace or the machine');
  });

  it('denies a card nobody answers once APPROVAL_TIMEOUT_S has passed, with one line', async () => {
    await start('rm -rf build', { APPROVAL_TIMEOUT_S: '1' });
    const asked = h.discord.humanSays('general', 'alice', `<@${codeBot().id}> clean`);
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls).toEqual([]);
    expect(botTexts()).toContain(`Nobody answered A1 in time: <@${codeBot().id}> does not run it.`);
    expect(botTexts().at(-1)).toBe('result: [ERROR: not approved: nobody approved it in time]');
    expect(h.llm.requests.map(agentOf)).toEqual(['code', 'code']);
    void channel;
  });
});

describe('approval buttons on Discord', () => {
  it('posts the card with Approve and Deny buttons; a click by the human who asked approves it', async () => {
    await start('rm -rf build');
    const { card, asked } = await cardAsked();
    expect(card.components).toEqual([
      {
        type: 1,
        components: [
          { type: 2, style: 3, label: 'Approve A1', custom_id: 'rt:approve:A1' },
          { type: 2, style: 4, label: 'Deny A1', custom_id: 'rt:deny:A1' },
        ],
      },
    ]);
    const byAlice = await h.discord.click(card.authorId, 'alice', card, 'rt:approve:A1');
    expect(byAlice).toMatchObject({ content: 'A1 approved.', ephemeral: true });
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['rm -rf build']);
    expect(botTexts()).toContain(`alice approved A1: <@${codeBot().id}> runs it.`);
    // Answered, the card is closed: no message has buttons any more (the lines answering it, the reply never had).
    await h.discord.until(() => card.components.length === 0);
    expect(h.discord.botMessages('general').filter((m) => m.components.length > 0)).toEqual([]);
  });

  it('refuses a click by another member with the reason, and an operator may deny by a click', async () => {
    await start('rm -rf build');
    const { card, asked } = await cardAsked();
    const byCarol = await h.discord.click(card.authorId, 'carol', card, 'rt:approve:A1');
    expect(byCarol).toMatchObject({
      content: 'Only @Alice (who asked) or an operator can answer A1.',
      ephemeral: true,
    });
    expect(h.sandbox.calls).toEqual([]);
    const byOtto = await h.discord.click(card.authorId, 'otto', card, 'rt:deny:A1');
    expect(byOtto).toMatchObject({ content: 'A1 denied.', ephemeral: true });
    await h.discord.until(() => botTexts().some((t) => t.startsWith('result:')));
    await h.settle(asked.id);
    expect(h.sandbox.calls).toEqual([]);
    expect(botTexts().at(-1)).toBe('result: [ERROR: not approved: otto denied it]');
  });

  it('approves nothing with a payload naming a card of another room', async () => {
    await start('rm -rf build');
    const { card } = await cardAsked();
    const elsewhere = h.discord.botSays('dev', card.authorId, 'Nothing waits here.');
    await h.received(elsewhere.id);
    // The command goes to the room of the message clicked, where no A1 waits.
    const replayed = await h.discord.click(card.authorId, 'alice', elsewhere, 'rt:approve:A1', { forged: true });
    expect(replayed).toMatchObject({ content: 'No approval A1 is waiting here.', ephemeral: true });
    // A payload that says it came from the card's channel, on a message of another one.
    const crossed = await h.discord.click(card.authorId, 'alice', elsewhere, 'rt:approve:A1', {
      forged: true,
      channelId: channel(),
    });
    expect(crossed).toMatchObject({ content: 'That button is not on a message of this channel.', ephemeral: true });
    expect(h.sandbox.calls).toEqual([]);
    // The card itself still waits for its answer.
    const typed = await h.discord.slash('data-bot', 'alice', 'general', 'deny', { id: 'A1' });
    expect(typed.content).toBe('A1 denied.');
  });

  it("gives a human's look-alike card no buttons; a click on it or /approve approves nothing", async () => {
    await start('rm -rf build');
    const fake = h.discord.humanSays(
      'dev',
      'carol',
      'Approval needed [A1]: code wants to run bash:\n```\nrm -rf /\n```',
    );
    await h.settle(fake.id);
    expect(h.discord.messages('dev').filter((m) => m.components.length > 0)).toEqual([]);
    const clicked = await h.discord.click('data-bot', 'alice', fake, 'rt:approve:A1', { forged: true });
    expect(clicked).toMatchObject({ content: 'That message is not an approval card.', ephemeral: true });
    const typed = await h.discord.slash('data-bot', 'alice', 'dev', 'approve', { id: 'A1' });
    expect(typed.content).toBe('No approval A1 is waiting here.');
    expect(h.sandbox.calls).toEqual([]);
    expect(h.llm.requests).toEqual([]);
  });

  it('refuses a bot’s click, even an agent’s own bot', async () => {
    await start('rm -rf build');
    const { card } = await cardAsked();
    const byBot = await h.discord.click(card.authorId, 'code-bot', card, 'rt:approve:A1');
    expect(byBot).toMatchObject({ content: 'Bots cannot answer approval cards.', ephemeral: true });
    expect(h.sandbox.calls).toEqual([]);
    const typed = await h.discord.slash('data-bot', 'alice', 'general', 'deny', { id: 'A1' });
    expect(typed.content).toBe('A1 denied.');
  });

  it('answers a click on a card in a DM through the DM’s own bot, in that private room', async () => {
    await start('rm -rf build');
    const asked = h.discord.dm('alice', 'code-bot', 'clean the build folder');
    const dm = () => h.discord.world.dmChannel(h.discord.human('alice').id, codeBot().id).id;
    await h.discord.until(() => cardIn(dm()) !== undefined);
    const card = cardIn(dm()) as FakeMessage;
    expect(card.authorId).toBe(codeBot().id);
    const byAlice = await h.discord.click(codeBot(), 'alice', card, 'rt:approve:A1');
    expect(byAlice).toMatchObject({ content: 'A1 approved.', ephemeral: true });
    await h.settle(asked.id);
    await h.discord.until(() => h.sandbox.calls.length === 1);
    expect(h.sandbox.calls.map((c) => c.command)).toEqual(['rm -rf build']);
  });
});
