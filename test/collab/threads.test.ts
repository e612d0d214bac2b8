import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, situationOf, startHarness } from '../helpers/harness.js';
import { liveRequests, requests } from '../helpers/store-views.js';
import { until } from '../helpers/until.js';
import { dataOf } from '../helpers/untrusted.js';

let h: Harness;
afterEach(async () => h?.close());

const resuming = (r: RecordedRequest) => /request #\d+ (has answered|reached its deadline)/.test(situationOf(r));

describe('request_reply threads through the bridge', () => {
  it('counts a [pass] as an answer and tells the requester', async () => {
    h = await startHarness({
      agents: [{ name: 'lead' }, { name: 'a' }, { name: 'b' }],
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'lead')
        return resuming(r) ? { content: 'Thanks to both, decided.' } : { content: '@a @b opinions?' };
      if (agent === 'a') return { content: '[pass]' };
      return { content: 'I like it.' };
    });
    await h.adapter.say('@lead decide');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@lead]: @a @b opinions?',
      '[@b]: I like it.',
      '[@lead]: Thanks to both, decided.',
    ]);
    const resume = h.llm.requests.find(resuming);
    expect(situationOf(resume as RecordedRequest)).toContain('- @a passed (nothing to add)\n- @b: I like it.');
  });

  it('nests a request made while answering another', async () => {
    h = await startHarness({ agents: [{ name: 'pm' }, { name: 'writer' }, { name: 'expert' }] });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'pm') return resuming(r) ? { content: 'Good, done.' } : { content: '@writer draft it' };
      if (agent === 'writer') {
        return resuming(r)
          ? { content: '@pm draft ready, checked with the expert' }
          : { content: '@expert is this right?' };
      }
      return { content: '@writer yes, it is right' };
    });
    await h.adapter.say('@pm go');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual([
      '[@pm]: @writer draft it',
      '[@writer]: @expert is this right?',
      '[@expert]: @writer yes, it is right',
      '[@writer]: @pm draft ready, checked with the expert',
      '[@pm]: Good, done.',
    ]);
    const threads = await requests(h.store);
    expect(threads.map((t) => [t.id, t.requester, t.parentId, t.status])).toEqual([
      [1, 'pm', null, 'closed'],
      [2, 'writer', 1, 'closed'],
    ]);
  });

  it('does not cancel a thread when a human speaks meanwhile; /status lists it; /pass cancels it', async () => {
    h = await startHarness({ agents: [{ name: 'pm' }, { name: 'slow' }] });
    h.llm.respond((r) => (agentOf(r) === 'pm' && !resuming(r) ? { content: '@slow take your time' } : { hang: true }));
    await h.adapter.say('@pm start');
    await until(() => h.llm.requests.some((r) => agentOf(r) === 'slow'));
    await h.adapter.say('just chatting here'); // no agent woken: pm is mention-only
    const status = await h.adapter.command('status');
    expect(status).toMatch(/Working: @slow/);
    expect(status).toMatch(/Request #1: @pm waits for @slow \(answered: 0 of 1\), since \d\d:\d\d:\d\d UTC/);
    expect(await h.adapter.command('pass')).toMatch(/Control is with the humans \(1 agent turn stopped\)/);
    await h.bridge.idle();
    expect((await requests(h.store))[0]?.status).toBe('cancelled');
    expect(await h.adapter.command('status')).toMatch(/Open requests: none/);
    expect(h.llm.requests.filter(resuming)).toHaveLength(0);
  });

  it('resumes the requester with what it has when the deadline passes', async () => {
    h = await startHarness({
      agents: [{ name: 'pm', tools: ['send_channel_message'] }, { name: 'quick' }],
      env: { REPLY_TIMEOUT_S: '1' },
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent === 'pm' && resuming(r)) return { content: 'Going ahead without alice.' };
      if (agent === 'pm' && r.messages.at(-1)?.role === 'tool') return { content: 'Asked in #planning.' };
      if (agent === 'pm') {
        return {
          toolCalls: [
            {
              name: 'send_channel_message',
              arguments: { channel: '#planning', message: '@quick @alice budget?', request_reply: ['quick', 'alice'] },
            },
          ],
        };
      }
      return { content: 'Budget is fine.' };
    });
    await h.adapter.say('@pm ask planning about the budget');
    await h.bridge.idle();
    expect(h.adapter.transcript('planning')).toEqual(['[@pm]: @quick @alice budget?', '[@quick]: Budget is fine.']);
    expect(h.adapter.transcript()).toEqual(['[@pm]: Asked in #planning.']);
    await until(() => h.adapter.transcript().length === 2); // the 1 s deadline passes
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@pm]: Asked in #planning.', '[@pm]: Going ahead without alice.']);
    const resume = h.llm.requests.find(resuming) as RecordedRequest;
    expect(situationOf(resume)).toMatch(
      /reached its deadline[\s\S]*- @quick: Budget is fine\.[\s\S]*Did not answer: @alice/,
    );
    expect((await requests(h.store))[0]).toMatchObject({
      status: 'closed',
      originRoom: 'test:room',
      targetRoom: 'test:planning',
    });
  });

  it('awaits a human in a DM and resumes in the channel with their answer', async () => {
    h = await startHarness({
      agents: [
        { name: 'pm', tools: ['send_dm'] },
        { name: 'other', activation: 'always' },
      ],
    });
    h.llm.respond((r) => {
      const agent = agentOf(r);
      if (agent !== 'pm') return { content: '[pass]' };
      if (resuming(r)) return { content: 'Alice says Friday works.' };
      if (r.messages.at(-1)?.role === 'tool') return { content: 'I asked Alice privately.' };
      return {
        toolCalls: [{ name: 'send_dm', arguments: { to: 'alice', message: 'Does Friday work?', request_reply: true } }],
      };
    });
    await h.adapter.say('@pm check with alice');
    await h.bridge.idle();
    expect(h.adapter.transcript('dm-pm-alice')).toEqual(['[@pm]: Does Friday work?']);
    expect(h.adapter.transcript()).toEqual(['[@pm]: I asked Alice privately.']);

    await h.adapter.say('yes, Friday is good', { channel: 'dm-pm-alice', user: 'alice', direct: 'pm' });
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@pm]: I asked Alice privately.', '[@pm]: Alice says Friday works.']);
    expect(situationOf(h.llm.requests.find(resuming) as RecordedRequest)).toContain('- @alice: yes, Friday is good');
    // The answer was consumed by the request: @pm was not also woken in the DM.
    expect(h.adapter.transcript('dm-pm-alice')).toHaveLength(1);
    // The DM never entered @other's context.
    const leaked = h.llm.requests.filter(
      (r) => agentOf(r) === 'other' && JSON.stringify(r.messages).includes('Friday is good'),
    );
    expect(leaked).toEqual([]);
  });

  it('refuses a DM to an agent or to someone unreachable, with a clear error to the model', async () => {
    h = await startHarness({ agents: [{ name: 'pm', tools: ['send_dm'] }, { name: 'other' }] });
    h.adapter.unreachable.add('ghost');
    h.llm.script(
      'pm',
      {
        toolCalls: [
          { name: 'send_dm', arguments: { to: 'other', message: 'hi' } },
          { name: 'send_dm', arguments: { to: 'ghost', message: 'hi' } },
        ],
      },
      { content: 'ok' },
    );
    await h.adapter.say('@pm go');
    await h.bridge.idle();
    const tools = h.llm.requests[1]?.messages.filter((m) => m.role === 'tool').map((m) => dataOf(m.content));
    expect(tools).toEqual([
      '[ERROR: @other is an agent: use chat_request to talk with an agent privately]',
      '[ERROR: @ghost cannot be reached by direct message]',
    ]);
  });

  it('keeps an open thread across a restart and resumes once when the last answer arrives', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rt-thread-restart-'));
    try {
      h = await startHarness({
        agents: [{ name: 'pm' }, { name: 'a' }, { name: 'b' }],
        storeFile: path.join(dir, 'rt.db'),
      });
      let bHangs = true;
      h.llm.respond((r) => {
        const agent = agentOf(r);
        if (agent === 'pm')
          return resuming(r) ? { content: 'Both answered, thanks.' } : { content: '@a @b your views?' };
        if (agent === 'a') return { content: 'A thinks yes.' };
        return bHangs ? { hang: true } : { content: 'B thinks no.' };
      });
      await h.adapter.say('@pm ask them');
      await until(() => h.llm.requests.some((r) => agentOf(r) === 'b'));
      expect((await liveRequests(h.store))[0]?.answers.map((a) => a.participant)).toEqual(['a']);
      bHangs = false;
      await h.restart();
      await h.bridge.idle();
      expect(h.adapter.transcript()).toEqual([
        '[@pm]: @a @b your views?',
        '[@a]: A thinks yes.',
        '[@b]: B thinks no.',
        '[@pm]: Both answered, thanks.',
      ]);
      expect(h.llm.requests.filter(resuming)).toHaveLength(1);
      expect((await requests(h.store))[0]?.status).toBe('closed');
    } finally {
      await h.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
