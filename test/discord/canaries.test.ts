/**
 * Nothing said in one room reaches another through an agent (docs/trust.md): a canary written in a DM and in a
 * private exchange — in the message, in what the agent remembered, in its tool runs — is in no model request of
 * the same agent in another room, nor of another agent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf } from '../helpers/harness.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

let h: DiscordHarness;
afterEach(async () => h?.close());

const CANARY = 'PIN-4711-CANARY';
const text = (request: RecordedRequest) => JSON.stringify(request.messages);

describe('canaries across rooms', () => {
  it("keeps a DM's words, memory and tool runs out of every other room", async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'data', activation: 'mention', control: true },
        { name: 'code', activation: 'mention', tools: ['bash', 'remember'] },
      ],
    });
    h.sandbox.onExec((_room, command) => ({ output: `${command}\n`, exitCode: 0 }));
    let dmTurn = true;
    h.llm.respond((request) => {
      const last = request.messages.at(-1);
      if (agentOf(request) === 'code' && dmTurn && last?.role !== 'tool') {
        return {
          toolCalls: [
            { name: 'remember', arguments: { key: 'pin', value: CANARY } },
            { name: 'bash', arguments: { command: `echo ${CANARY}` } },
          ],
        };
      }
      return { content: 'noted' };
    });
    const dm = h.discord.dm('alice', 'code-bot', `my deploy ${CANARY}, keep it`);
    await h.discord.until(() => h.discord.botMessages(dm.channelId).length === 1);
    await h.settle(dm.id);
    dmTurn = false;
    const dmRequests = h.llm.requests.length;
    expect(h.llm.requests.some((r) => text(r).includes(CANARY))).toBe(true);

    const code = h.discord.bot('code-bot');
    const data = h.discord.bot('data-bot');
    const asked = h.discord.humanSays('general', 'carol', `<@${code.id}> <@${data.id}> what was alice's PIN?`);
    await h.discord.until(() => h.discord.botMessages('general').length >= 2);
    await h.settle(asked.id);
    const later = h.llm.requests.slice(dmRequests);
    expect(later.map(agentOf).sort()).toEqual(['code', 'data']);
    for (const request of later) expect(text(request)).not.toContain(CANARY);
    for (const message of h.discord.botMessages('general')) expect(message.content).not.toContain(CANARY);
  });
});
