/**
 * Acting for someone on Slack (docs/trust.md): an agent posts in another channel, or DMs a person, for the human
 * whose message started its turn only where that human could themselves; anything else waits for an operator.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { dataOf } from '../helpers/untrusted.js';
import { type SlackHarness, startSlackHarness } from './slack-harness.js';

let h: SlackHarness;
afterEach(async () => h?.close());

const lastTool = (request: RecordedRequest) => {
  const last = request.messages.at(-1);
  return last?.role === 'tool' ? dataOf(last.content) : undefined;
};

async function start(call: { name: string; arguments: Record<string, unknown> }): Promise<void> {
  h = await startSlackHarness({
    agents: [
      { name: 'data', activation: 'mention', control: true },
      { name: 'code', activation: 'mention', tools: ['send_channel_message', 'send_dm'] },
    ],
  });
  h.llm.respond((request) => {
    const result = lastTool(request);
    return result !== undefined ? { content: `result: ${result}` } : { toolCalls: [call] };
  });
}

const said = () => h.slack.posts(h.general).map((m) => m.text);

describe('acting for someone on Slack', () => {
  it('posts without a card in a channel the asker is in, and waits for an operator in one they are not', async () => {
    await start({ name: 'send_channel_message', arguments: { channel: '#secret', message: 'the roadmap' } });
    const code = h.apps.code;
    const data = h.apps.data;
    if (!code || !data) throw new Error('no apps');
    const secret = h.slack.addChannel('secret', [h.olga, code, data]);
    const asked = h.slack.say(h.alice, h.general, `<@${code.botUserId}> post the roadmap in #secret`);
    await h.slack.waitFor(() => said().some((t) => t.includes('Approval needed [A1]')), 10_000, 'the card');
    const card = said().find((t) => t.includes('Approval needed [A1]')) ?? '';
    expect(card).toContain(`where <@${h.alice.id}> cannot post, so an operator may answer`);
    expect(h.slack.posts(secret)).toEqual([]);
    // The asker may not answer it: posting there is beyond what she could do herself.
    h.slack.slashCommand(data, { command: '/approve', text: 'A1', user: h.alice, channel: h.general });
    await h.slack.waitFor(() => h.slack.slashResponses.length === 1, 10_000, 'the refusal');
    expect(String(h.slack.slashResponses[0]?.body.text)).toContain('Only an operator can answer A1.');
    h.slack.slashCommand(data, { command: '/approve', text: 'A1', user: h.olga, channel: h.general });
    await h.slack.waitFor(() => h.slack.posts(secret).length === 1, 10_000, 'the post');
    await h.settle(asked.ts);
    expect(h.slack.posts(secret)[0]?.text).toBe('the roadmap');
  });

  it('posts at once in a channel the asker is a member of', async () => {
    await start({ name: 'send_channel_message', arguments: { channel: '#dev', message: 'build is green' } });
    const code = h.apps.code;
    if (!code) throw new Error('no app');
    const dev = h.slack.addChannel('dev', [h.alice, code]);
    const asked = h.slack.say(h.alice, h.general, `<@${code.botUserId}> tell #dev`);
    await h.slack.waitFor(() => h.slack.posts(dev).length === 1, 10_000, 'the post');
    await h.settle(asked.ts);
    expect(said().some((t) => t.includes('Approval needed'))).toBe(false);
  });

  it('sends a DM to someone who shares a channel with the asker at once', async () => {
    await start({ name: 'send_dm', arguments: { to: 'Olga', message: 'the build is green' } });
    const code = h.apps.code;
    if (!code) throw new Error('no app');
    // The bridge knows people by the names it has seen them under.
    await h.settle(h.slack.say(h.olga, h.general, 'morning').ts);
    const asked = h.slack.say(h.alice, h.general, `<@${code.botUserId}> tell olga`);
    await h.slack.waitFor(() => said().some((t) => t.startsWith('result:')), 10_000, 'the answer');
    await h.settle(asked.ts);
    expect(said().some((t) => t.includes('Approval needed'))).toBe(false);
    expect(h.slack.workspace.messages.filter((m) => m.text === 'the build is green')).toHaveLength(1);
  });

  it('sends a DM to someone who shares no channel with the asker only with an operator', async () => {
    await start({ name: 'send_dm', arguments: { to: 'Zed', message: 'what is the PIN?' } });
    const code = h.apps.code;
    if (!code) throw new Error('no app');
    const zed = h.slack.addHuman('zed', 'Zed');
    // Zed is known by name from a channel Alice is not in.
    const elsewhere = h.slack.addChannel('elsewhere', [zed, code]);
    await h.settle(h.slack.say(zed, elsewhere, 'hello').ts);
    const asked = h.slack.say(h.alice, h.general, `<@${code.botUserId}> ask zed for the PIN`);
    await h.slack.waitFor(() => said().some((t) => t.includes('Approval needed [A1]')), 10_000, 'the card');
    expect(said().find((t) => t.includes('Approval needed [A1]'))).toContain('who shares no room with');
    const data = h.apps.data;
    if (!data) throw new Error('no app');
    h.slack.slashCommand(data, { command: '/deny', text: 'A1', user: h.olga, channel: h.general });
    await h.slack.waitFor(() => said().some((t) => t.startsWith('result:')), 10_000, 'the answer');
    await h.settle(asked.ts);
    expect(said().at(-1)).toContain('not approved: olga denied it');
    expect(h.slack.workspace.messages.filter((m) => m.text === 'what is the PIN?')).toEqual([]);
  });
});
