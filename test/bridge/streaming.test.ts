import { afterEach, describe, expect, it } from 'vitest';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { history } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';

let h: Harness;
afterEach(async () => h?.close());

describe('streaming replies (platforms that edit a message as the agent writes)', () => {
  it('shows the reply while it is written, then finishes it as one stored message', async () => {
    h = await startHarness({ agents: [{ name: 'code', activation: 'mention' }] });
    h.adapter.streaming = true;
    const reply = 'Here is a fairly long answer that arrives in many small pieces over the stream.';
    h.llm.script('code', { content: reply });
    await h.adapter.say('@code explain');
    await h.bridge.idle();
    const [stream] = h.adapter.streams;
    expect(stream?.updates.length).toBeGreaterThan(3);
    expect(stream?.updates.every((u) => reply.startsWith(u) && u.length >= 12)).toBe(true);
    expect(stream?.finished).toBe(reply);
    expect(h.llm.requests[0]?.stream).toBe(true);
    const stored = await history(h.store, 'test', 'room', 10);
    expect(stored.map((m) => `${m.kind}:${m.content}`)).toEqual(['human:@code explain', `agent:${reply}`]);
  });

  it('shows nothing for a [pass], and posts no message', async () => {
    h = await startHarness({ agents: [{ name: 'code', activation: 'mention' }] });
    h.adapter.streaming = true;
    h.llm.script('code', { content: '[pass]' });
    await h.adapter.say('@code anything?');
    await h.bridge.idle();
    expect(h.adapter.streams).toEqual([]);
    expect(h.adapter.posts).toEqual([]);
  });

  it('finishes a streamed <world>pass</world> reply without the tag, then posts the hand-back line', async () => {
    h = await startHarness({ agents: [{ name: 'data', activation: 'mention' }] });
    h.adapter.streaming = true;
    h.llm.script('data', { content: 'All answered, nothing left to do here. <world>pass</world>' });
    await h.adapter.say('@data done?');
    await h.bridge.idle();
    expect(h.adapter.streams[0]?.updates.some((u) => u.includes('<world>'))).toBe(false);
    expect(h.adapter.streams[0]?.finished).toBe('All answered, nothing left to do here.');
    expect(h.adapter.transcript()).toEqual([
      '[@data]: All answered, nothing left to do here.',
      '[system]: @human data is passing control to you',
    ]);
  });

  it('removes what was shown when an operator stops the agent mid-turn', async () => {
    let release: () => void = () => {};
    const sandbox = new FakeSandbox(
      () =>
        new Promise((resolve) => {
          release = () => resolve({ output: 'done', exitCode: 0 });
        }),
    );
    h = await startHarness({ agents: [{ name: 'code', activation: 'mention', tools: ['bash'] }], sandbox });
    h.adapter.streaming = true;
    h.llm.script('code', {
      content: 'Let me check the files first, one moment.',
      toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }],
    });
    await h.adapter.say('@code look');
    // The whole first-round text is shown while the tool runs.
    await until(() => sandbox.calls.length === 1);
    expect(h.adapter.streams[0]?.updates.at(-1)).toBe('Let me check the files first, one moment.');
    await h.adapter.command('pass');
    release();
    await h.bridge.idle();
    expect(h.adapter.streams[0]?.cancelled).toBe(true);
    expect(h.adapter.posts).toEqual([]);
  });

  it('shows a hand-back tag inside a code block while it is written, as the room posts it', async () => {
    h = await startHarness({ agents: [{ name: 'code', activation: 'mention' }] });
    h.adapter.streaming = true;
    const reply = 'The tag to write is:\n```\n<world>pass</world>\n```';
    h.llm.script('code', { content: reply });
    await h.adapter.say('@code which tag hands back?');
    await h.bridge.idle();
    expect(h.adapter.streams[0]?.updates.at(-1)).toBe(reply);
    expect(h.adapter.streams[0]?.finished).toBe(reply);
  });
});
