import { afterEach, describe, expect, it } from 'vitest';
import type { ApiCall } from '../fakes/slack/index.js';
import { type SlackHarness, startSlackHarness } from './slack-harness.js';

let h: SlackHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const STREAMING = { SLACK_STREAM: 'update', LLM_STREAM: 'true' };

const ts = (call: ApiCall | undefined) => String(call?.args.ts);

/** The stored history of a Slack room, as `kind:author:text`. */
async function history(harness: SlackHarness, room: string): Promise<string[]> {
  const channel = await harness.store.rooms.open('slack', room);
  return (await harness.store.rooms.history(channel.id, 50)).map((m) => `${m.kind}:${m.author}:${m.content}`);
}

/**
 * A human message that wakes no one. Every app's socket delivers it after the events sent
 * before it, so once the bridge has it, the adapter has dealt with every earlier echo.
 */
async function barrier(harness: SlackHarness): Promise<void> {
  const sent = harness.slack.say(harness.alice, harness.general, 'thanks');
  await harness.settle(sent.ts);
}

describe('Slack streaming replies (SLACK_STREAM=update)', () => {
  it('posts a streamed reply once, edits it to the final text with few updates, and stores one message', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'mention', control: true }], env: STREAMING });
    const harness = h;
    const code = harness.slack.app('code');
    const reply = 'Here is a **fairly long** answer that arrives in many small pieces over the stream, word by word.';
    harness.llm.script('code', { content: reply });

    const asked = harness.slack.say(harness.alice, harness.general, `<@${code.botUserId}> explain`);
    await harness.settle(asked.ts);
    await barrier(harness);

    const posts = harness.slack.calls('chat.postMessage', 'code');
    const updates = harness.slack.calls('chat.update', 'code');
    const final = 'Here is a *fairly long* answer that arrives in many small pieces over the stream, word by word.';
    expect(posts).toHaveLength(1);
    expect(posts[0]?.args).toMatchObject({ channel: harness.general.id, thread_ts: asked.ts });
    expect(String(posts[0]?.args.text)).toMatch(/^Here is a/);
    // About 25 deltas came in; the edits in between were skipped, and the last one is the final text.
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.length).toBeLessThanOrEqual(2);
    const shown = harness.slack.posts(harness.general);
    expect(updates.map(ts)).toEqual(updates.map(() => shown[0]?.ts));
    expect(updates.at(-1)?.args.text).toBe(final);
    expect(harness.slack.calls('chat.delete')).toEqual([]);
    expect(shown.map((m) => [m.user, m.threadTs, m.text, m.edited])).toEqual([[code.botUserId, asked.ts, final, true]]);
    expect(harness.llm.requests[0]?.stream).toBe(true);
    expect(await history(harness, `${harness.general.id}/${asked.ts}`)).toEqual([
      'human:Alice_Smith:@code explain',
      `agent:code:${reply}`,
    ]);
    // The streamed message's own event never reached the bridge as a new message.
    expect(harness.adapter.received.map((e) => e.messageId)).not.toContain(shown[0]?.ts);
  });

  it('ends a reply that mentions someone as a fresh post (the partial is deleted), so Slack notifies', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'code', activation: 'mention', control: true },
        { name: 'data', activation: 'mention' },
      ],
      env: STREAMING,
    });
    const harness = h;
    const code = harness.slack.app('code');
    const data = harness.slack.app('data');
    harness.llm.script('code', { content: '@data here are the numbers you asked for: 5200, 3100 and 900.' });
    harness.llm.script('data', { content: '[pass]' });

    const asked = harness.slack.say(harness.alice, harness.general, `<@${code.botUserId}> send data the numbers`);
    await harness.settle(asked.ts);
    await barrier(harness);

    const [preview, fresh] = harness.slack.calls('chat.postMessage', 'code');
    const [partial] = harness.slack.workspace.deleted;
    // The preview shows the mention as plain text: posting it must not notify.
    expect(String(preview?.args.text)).toMatch(/^@data here/);
    expect(partial?.text).toBe(preview?.args.text);
    expect(harness.slack.calls('chat.delete', 'code').map(ts)).toEqual([partial?.ts]);
    expect(harness.slack.workspace.deleted).toHaveLength(1);
    expect(fresh?.args.text).toBe(`<@${data.botUserId}> here are the numbers you asked for: 5200, 3100 and 900.`);

    const shown = harness.slack.posts(harness.general);
    expect(shown.map((m) => [m.user, m.threadTs, m.edited])).toEqual([[code.botUserId, asked.ts, false]]);
    // data heard the mention (app_mention for the fresh post only) and was asked; it passed.
    const mentions = harness.slack.deliveries.filter(
      (d) =>
        d.app === 'data' &&
        (d.envelope as { payload: { event: { type: string } } }).payload.event.type === 'app_mention',
    );
    expect(mentions).toHaveLength(1);
    expect(harness.llm.requests.map((r) => r.model).slice(0, 2)).toEqual(['code', 'data']);
    expect(await history(harness, `${harness.general.id}/${asked.ts}`)).toEqual([
      'human:Alice_Smith:@code send data the numbers',
      'agent:code:@data here are the numbers you asked for: 5200, 3100 and 900.',
    ]);
    expect(harness.adapter.received.map((e) => e.messageId)).not.toContain(partial?.ts);
  });

  it('does not ask the model to stream when no preview is shown (SLACK_STREAM=off, LLM_STREAM=false)', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'mention', control: true }] });
    const harness = h;
    const code = harness.slack.app('code');
    harness.llm.script('code', { content: 'Plain answer.' });
    const asked = harness.slack.say(harness.alice, harness.general, `<@${code.botUserId}> explain`);
    await harness.settle(asked.ts);
    await barrier(harness);
    expect(harness.llm.requests.map((r) => r.stream)).toEqual([false]);
    expect(await history(harness, `${harness.general.id}/${asked.ts}`)).toContain('agent:code:Plain answer.');
  });

  it('posts nothing for a [pass]', async () => {
    h = await startSlackHarness({ agents: [{ name: 'code', activation: 'mention', control: true }], env: STREAMING });
    const harness = h;
    const code = harness.slack.app('code');
    harness.llm.script('code', { content: '[pass]' });

    const asked = harness.slack.say(harness.alice, harness.general, `<@${code.botUserId}> anything?`);
    await harness.settle(asked.ts);

    expect(harness.llm.requests).toHaveLength(1);
    expect(harness.slack.calls('chat.postMessage')).toEqual([]);
    expect(harness.slack.calls('chat.update')).toEqual([]);
    expect(harness.slack.posts(harness.general)).toEqual([]);
  });

  it('deletes the partial reply when an operator uses /pass mid-stream', async () => {
    h = await startSlackHarness({
      agents: [
        { name: 'code', activation: 'mention', control: true, tools: ['bash'] },
        // Bolt hides an app's own messages from it; the partial's event reaches the adapter through data's app.
        { name: 'data', activation: 'mention' },
      ],
      env: STREAMING,
    });
    const harness = h;
    const code = harness.slack.app('code');
    let release: () => void = () => {};
    harness.sandbox.onExec(
      () =>
        new Promise((resolve) => {
          release = () => resolve({ output: 'README.md\n', exitCode: 0 });
        }),
    );
    harness.llm.script('code', {
      content: 'Let me check the files first, one moment.',
      toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }],
    });

    const asked = harness.slack.say(harness.alice, harness.general, `<@${code.botUserId}> look around`);
    const preview = await harness.slack.waitFor(() => harness.slack.posts(harness.general)[0], 10_000, 'preview');
    await harness.slack.waitFor(() => harness.sandbox.calls.length === 1, 10_000, 'bash');
    harness.slack.slashCommand(code, { command: '/pass', user: harness.olga, channel: harness.general });
    await harness.slack.waitFor(() => harness.slack.slashResponses.length === 1, 5000, '/pass answer');
    release();
    await harness.settle(asked.ts);
    await barrier(harness);

    expect(preview.threadTs).toBe(asked.ts);
    expect(harness.slack.calls('chat.delete', 'code').map(ts)).toEqual([preview.ts]);
    expect(harness.slack.posts(harness.general)).toEqual([]);
    expect(harness.llm.requests).toHaveLength(1);
    expect(await history(harness, `${harness.general.id}/${asked.ts}`)).toEqual([
      'human:Alice_Smith:@code look around',
    ]);
    expect(harness.adapter.received.map((e) => e.messageId)).not.toContain(preview.ts);
  });
});
