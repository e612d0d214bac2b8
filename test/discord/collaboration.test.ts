import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../fakes/discord/index.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, situationOf } from '../helpers/harness.js';
import { requests } from '../helpers/store-views.js';
import { type DiscordHarness, startDiscordHarness } from './discord-harness.js';

let h: DiscordHarness;
afterEach(async () => h?.close());

const resumed = (r: RecordedRequest, id?: number) =>
  id === undefined
    ? /request #\d+ has answered/.test(situationOf(r))
    : situationOf(r).includes(`asked in request #${id} has answered`);
const author = (m: FakeMessage) => h.discord.world.user(m.authorId)?.username ?? '?';

describe('agents working together on Discord', () => {
  it("plays the writers' room: @pm resumes once after both opinions", async () => {
    h = await startDiscordHarness({
      agents: [
        { name: 'pm', activation: 'always', control: true },
        { name: 'lead_writer', activation: 'mention' },
        { name: 'science', activation: 'mention' },
        { name: 'character_dev', activation: 'mention' },
      ],
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'pm') {
        if (resumed(r, 3)) return { content: 'The episode is set.' };
        if (resumed(r, 2)) return { content: '@lead_writer please revise with both notes.' };
        if (resumed(r, 1)) return { content: '@character_dev @science opinions on this plot?' };
        return { content: '@lead_writer please draft a plot.' };
      }
      if (agent === 'lead_writer') {
        return {
          content: situationOf(r).includes('(request #3)') ? '@pm Revised plot.' : '@pm Plot: Europa, warm water.',
        };
      }
      if (agent === 'science') return { content: 'Plausible: tidal heating.' };
      return { content: 'Mara should hesitate first.' };
    });
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> plan episode 4`);
    await h.discord.until(() => h.discord.botMessages('general').length === 8);
    await h.settle(asked.id);

    expect(h.discord.botMessages('general').map(author)).toEqual([
      'pm-bot',
      'lead_writer-bot',
      'pm-bot',
      'character_dev-bot',
      'science-bot',
      'pm-bot',
      'lead_writer-bot',
      'pm-bot',
    ]);
    // Real mentions went out: @pm's request pinged both specialists' bots.
    expect(h.discord.botMessages('general')[3 - 1]?.content).toBe(
      `<@${h.discord.bot('character_dev-bot').id}> <@${h.discord.bot('science-bot').id}> opinions on this plot?`,
    );
    expect(h.llm.requests.filter((r) => agentOf(r) === 'pm' && resumed(r, 2))).toHaveLength(1);
    expect((await requests(h.store)).map((t) => [t.requester, t.status, t.answers.map((a) => a.participant)])).toEqual([
      ['pm', 'closed', ['lead_writer']],
      ['pm', 'closed', ['character_dev', 'science']],
      ['pm', 'closed', ['lead_writer']],
    ]);
  });

  it('asks a human by DM, resumes in the channel with the answer, and posts to #dev by name', async () => {
    h = await startDiscordHarness({
      agents: [{ name: 'pm', activation: 'mention', control: true, tools: ['send_dm', 'send_channel_message'] }],
    });
    h.llm.respond((r) => {
      if (resumed(r)) return { content: 'Alice confirmed Friday.' };
      const tools = r.messages.filter((m) => m.role === 'tool').length;
      if (tools === 0) {
        return {
          toolCalls: [
            { name: 'send_dm', arguments: { to: 'Alice', message: 'Is Friday OK?', request_reply: true } },
            { name: 'send_channel_message', arguments: { channel: '#dev', message: 'Planning Friday.' } },
          ],
        };
      }
      return { content: 'I asked Alice.' };
    });
    const asked = h.discord.humanSays('general', 'alice', `<@${h.discord.bot('pm-bot').id}> check with me privately`);
    await h.discord.until(() => h.discord.botMessages('general').length === 1);
    await h.settle(asked.id);
    expect(h.discord.botMessages('dev').map((m) => m.content)).toEqual(['Planning Friday.']);
    const dm = h.discord.world.dmChannel(h.discord.human('alice').id, h.discord.bot('pm-bot').id);
    expect(h.discord.botMessages(dm).map((m) => m.content)).toEqual(['Is Friday OK?']);

    const answer = h.discord.dm('alice', 'pm-bot', 'Yes, Friday works');
    await h.discord.until(() => h.discord.botMessages('general').length === 2);
    await h.settle(answer.id);
    expect(h.discord.botMessages('general').map((m) => m.content)).toEqual([
      'I asked Alice.',
      'Alice confirmed Friday.',
    ]);
    expect(situationOf(h.llm.requests.find((r) => resumed(r)) as RecordedRequest)).toContain(
      '- @Alice: Yes, Friday works',
    );
  });

  it('catches up on a DM after the bridge restarts', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'code', activation: 'mention' }] });
    let n = 0;
    h.llm.respond(() => ({ content: `dm reply ${++n}` }));
    const first = h.discord.dm('alice', 'code-bot', 'hello');
    await h.discord.until(() => h.discord.botMessages(first.channelId).length === 1);
    await h.settle(first.id);
    await h.down();
    h.discord.dm('alice', 'code-bot', 'are you there?');
    await h.up();
    await h.discord.until(() => h.discord.botMessages(first.channelId).length === 2);
    await h.bridge.idle();
    expect(h.discord.botMessages(first.channelId).map((m) => m.content)).toEqual(['dm reply 1', 'dm reply 2']);
  });
});
