/**
 * Approvals on Discord through the fake (rule 17, docs/trust.md): a card in the room shows exactly what will run;
 * only the human who asked or an operator answers it (/approve, /deny); the call runs only once approved.
 */
import { afterEach, describe, expect, it } from 'vitest';
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
