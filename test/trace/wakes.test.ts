/**
 * What wakes someone without a new message is traced too: a human's edit that newly names an agent (its own trace,
 * the decision with who the edit asked, the turn it woke), and a request's deadline firing (a decision in the trace
 * of the message that opened the request).
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it, vi } from 'vitest';
import type { RoomState } from '../../src/room/state.js';
import { traceDecision } from '../../src/trace/decision.js';
import { type DiscordHarness, startDiscordHarness } from '../discord/discord-harness.js';
import { attr, recordSpansInFile, traceOf } from './spans.js';

let h: DiscordHarness | undefined;
const spans = recordSpansInFile(async () => {
  await h?.close();
  h = undefined;
});

const WAIT = { timeout: 30_000, interval: 20 };

describe('traces of what wakes an agent without a new message', () => {
  it('traces an edit that newly names an agent: its decision and the turn it woke', async () => {
    h = await startDiscordHarness({ agents: [{ name: 'pm', activation: 'mention' }] });
    h.llm.respond(() => ({ content: 'On it.' }));
    const said = h.discord.humanSays('general', 'alice', 'plan episode 4');
    await h.settle(said.id);
    h.discord.humanEdits(said, `<@${h.discord.bot('pm-bot').id}> plan episode 4`);
    await vi.waitFor(() => expect(spans.named('post')).toHaveLength(1), WAIT);
    const edits = spans.named('message').filter((s) => attr(s, 'roundtable.edit') === true);
    expect(edits).toHaveLength(1);
    const [root] = edits as [ReadableSpan];
    const decision = spans.named('decide').find((s) => attr(s, 'roundtable.event') === 'edit');
    expect(decision && spans.parentOf(decision)).toBe(root);
    expect(attr(decision, 'roundtable.asked')).toEqual(['pm:addressed']);
    const [turn] = spans.named('chat pm');
    expect(turn && traceOf(turn)).toBe(traceOf(root));
    expect(turn?.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
  }, 60_000);

  it("puts a request's deadline in the trace of the message that opened the request", async () => {
    const opener = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const state = {
      requests: [{ id: 7, opener: { people: [], audience: null, trace: opener } }],
      queue: [],
      current: null,
      posts: [],
    } as unknown as RoomState;
    const taken = await traceDecision('test:room', { type: 'deadline', request: 7 }, state, async (traced) => {
      traced?.decided({ effects: [], writes: [], state } as never);
      return 'done';
    });
    expect(taken).toBe('done');
    const [decision] = spans.named('decide');
    expect(decision && traceOf(decision)).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(decision?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(decision?.attributes).toMatchObject({ 'roundtable.event': 'deadline', 'roundtable.request.id': 7 });
  });
});
