/**
 * How the room decides who speaks, replayed on the fake Slack through the real adapter.
 * Before the room became one decision:
 * - a quoted line (`> @eps wrote: …`) wakes @eps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { agentOf } from '../helpers/harness.js';
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
