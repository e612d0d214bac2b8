import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { situationOf } from '../helpers/harness.js';
import { type SlackHarness, startSlackHarness } from './slack-harness.js';

let h: SlackHarness;
afterEach(async () => h?.close());

const resumed = (r: RecordedRequest) => /request #\d+ has answered/.test(situationOf(r));

describe('agents working together on Slack', () => {
  it('asks a human by DM, resumes in the thread with the answer, and posts to #dev by name', async () => {
    h = await startSlackHarness({
      agents: [{ name: 'pm', activation: 'mention', control: true, tools: ['send_dm', 'send_channel_message'] }],
    });
    const pm = h.slack.app('pm');
    const dev = h.slack.addChannel('dev', [h.alice, pm]);
    h.llm.respond((r) => {
      if (resumed(r)) return { content: 'Alice confirmed Friday.' };
      if (r.messages.some((m) => m.role === 'tool')) return { content: 'I asked Alice.' };
      return {
        toolCalls: [
          { name: 'send_dm', arguments: { to: 'Alice_Smith', message: 'Is Friday OK?', request_reply: true } },
          { name: 'send_channel_message', arguments: { channel: '#dev', message: 'Planning Friday.' } },
        ],
      };
    });
    const asked = h.slack.say(h.alice, h.general, `<@${pm.botUserId}> check with me privately`);
    await h.settle(asked.ts);
    const thread = h.slack.posts(h.general).filter((m) => m.threadTs === asked.ts);
    expect(thread.map((m) => m.text)).toEqual(['I asked Alice.']);
    expect(h.slack.posts(dev).map((m) => m.text)).toEqual(['Planning Friday.']);
    const dm = h.slack.dm(pm, h.alice);
    expect(h.slack.posts(dm).map((m) => m.text)).toEqual(['Is Friday OK?']);

    const answer = h.slack.say(h.alice, dm, 'Yes, Friday works');
    await h.settle(answer.ts);
    await h.slack.waitFor(() => h.slack.posts(h.general).filter((m) => m.threadTs === asked.ts).length === 2);
    await h.bridge.idle();
    expect(
      h.slack
        .posts(h.general)
        .filter((m) => m.threadTs === asked.ts)
        .map((m) => m.text),
    ).toEqual(['I asked Alice.', 'Alice confirmed Friday.']);
    expect(situationOf(h.llm.requests.find(resumed) as RecordedRequest)).toContain('- @Alice_Smith: Yes, Friday works');
    // The DM reply was the answer: the agent was not also woken in the DM.
    expect(h.slack.posts(dm)).toHaveLength(1);
  });
});
