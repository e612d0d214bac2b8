/**
 * Requests' deadlines as the shell runs them: each is handed to the bridge's scheduler (by default timers of the
 * process, by the bridge's clock), so a test can say when one falls due.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Deadline } from '../../src/bridge/index.js';
import type { RecordedRequest } from '../fakes/openai-server/index.js';
import { agentOf, type Harness, situationOf, startHarness } from '../helpers/harness.js';
import { requests } from '../helpers/store-views.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const resuming = (r: RecordedRequest) => /reached its deadline/.test(situationOf(r));

describe("a request's deadline", () => {
  it('is handed to the scheduler the bridge is given, REPLY_TIMEOUT_S after it opened by the bridge clock, and fires when that scheduler says', async () => {
    const clock = { now: 1_800_000_000_000 };
    const due: Array<Deadline & { fire: () => void; cancelled: boolean }> = [];
    h = await startHarness({
      agents: [{ name: 'pm', tools: ['send_channel_message'] }],
      env: { REPLY_TIMEOUT_S: '600' },
      clock: () => clock.now,
      scheduler: (deadline, fire) => {
        const entry = { ...deadline, fire, cancelled: false };
        due.push(entry);
        return () => {
          entry.cancelled = true;
        };
      },
    });
    h.llm.respond((r) => {
      if (agentOf(r) !== 'pm' || resuming(r)) return { content: 'Going ahead without alice.' };
      if (r.messages.at(-1)?.role === 'tool') return { content: 'Asked alice.' };
      const ask = { channel: 'here', message: '@alice budget?', request_reply: ['alice'] };
      return { toolCalls: [{ name: 'send_channel_message', arguments: ask }] };
    });
    const opened = clock.now;
    await h.adapter.say('@pm ask alice about the budget', { user: 'alice' });
    await h.bridge.idle();
    expect(due.map(({ room, request, at, cancelled }) => ({ room, request, at, cancelled }))).toEqual([
      { room: 'test:room', request: 1, at: opened + 600_000, cancelled: false },
    ]);
    expect((await requests(h.store))[0]?.status).toBe('open');

    clock.now = opened + 600_000;
    due[0]?.fire();
    await h.bridge.idle();
    expect((await requests(h.store))[0]?.status).toBe('closed');
    expect(h.adapter.transcript()).toEqual([
      '[@pm]: @alice budget?',
      '[@pm]: Asked alice.',
      expect.stringMatching(/^\[system\]: Request #1 from @pm reached its deadline: @alice did not answer in time/),
      '[@pm]: Going ahead without alice.',
    ]);
  });
});
