/**
 * One trace per human message on Slack and in the web room too (through their fakes), not only on Discord: the
 * message's root, the decision, the agent's turn and its post, all in the one trace.
 */
import { describe, expect, it, vi } from 'vitest';
import { WebPerson } from '../helpers/web-person.js';
import { type SlackHarness, startSlackHarness } from '../slack/slack-harness.js';
import { signIn, startWebHarness, type WebHarness } from '../web/web-harness.js';
import { attr, recordSpansInFile, traceOf } from './spans.js';

let close: (() => Promise<void>) | undefined;
const spans = recordSpansInFile(async () => {
  await close?.();
  close = undefined;
});

const WAIT = { timeout: 30_000, interval: 20 };
const LONG = 60_000;

/** The one trace of the platform's one human message: root, decision, turn and post, each once. */
function oneTrace(platform: string): void {
  const roots = spans.named('message').filter((s) => attr(s, 'roundtable.platform') === platform);
  expect(roots).toHaveLength(1);
  const [root] = roots;
  if (!root) throw new Error('no root');
  expect(root.parentSpanContext).toBeUndefined();
  const inTrace = spans.inTrace(traceOf(root));
  expect(inTrace).toHaveLength(spans.spans().length);
  const names = inTrace.map((s) => s.name);
  for (const name of ['message', 'store commit', 'chat code', 'post']) {
    expect(
      names.filter((n) => n === name),
      name,
    ).toHaveLength(1);
  }
  // The message's decision below the root (an outcome's decision that recorded why may follow, in the same trace).
  const decisions = spans.named('decide').filter((s) => attr(s, 'roundtable.event') === 'message');
  expect(decisions.map((s) => spans.parentOf(s))).toEqual([root]);
  expect(attr(decisions[0], 'roundtable.asked')).toEqual(['code:addressed']);
  const post = spans.named('post')[0];
  expect(post && spans.parentOf(post)?.name).toBe('chat code');
  expect(attr(post, 'roundtable.platform')).toBe(platform);
  expect(attr(post, 'roundtable.outcome')).toBe('posted');
}

describe('one trace per human message on every platform', () => {
  it(
    'traces a Slack message to its reply',
    async () => {
      const h: SlackHarness = await startSlackHarness({ agents: [{ name: 'code', activation: 'mention' }] });
      close = () => h.close();
      h.llm.respond(() => ({ content: 'Here it is.' }));
      const asked = h.slack.say(h.alice, h.general, `<@${h.apps.code?.botUserId}> what is in the repo?`);
      await h.settle(asked.ts);
      await vi.waitFor(() => expect(spans.named('post')).toHaveLength(1), WAIT);
      oneTrace('slack');
      const root = spans.named('message')[0];
      expect(attr(root, 'messaging.message.id')).toBe(asked.ts);
    },
    LONG,
  );

  it(
    'traces a web room message to its reply',
    async () => {
      const h: WebHarness = await startWebHarness({ agents: [{ name: 'code', activation: 'mention' }] });
      const ana = new WebPerson('ana', await signIn(await h.invite('ana')), () => h.url);
      close = async () => {
        ana.close();
        await h.close();
      };
      h.llm.respond(() => ({ content: 'Here it is.' }));
      ana.connect();
      // A page's post id: 8 to 64 letters, digits, - and _.
      ana.say('post-0001', '@code what is in the repo?');
      await vi.waitFor(() => expect(spans.named('post')).toHaveLength(1), WAIT);
      await vi.waitFor(() => expect(spans.named('message')).toHaveLength(1), WAIT);
      oneTrace('web');
    },
    LONG,
  );
});
