/**
 * A message whose turn a crash cut: after the restart the turn is taken again from the room's stored state, and its
 * span joins the trace of the message that started it (kept with the ask), saying it was resumed.
 */
import { describe, expect, it, vi } from 'vitest';
import { type CrashHarness, startCrashHarness } from '../helpers/crash-harness.js';
import { until } from '../helpers/until.js';
import { attr, recordSpansInFile, traceOf } from './spans.js';

let h: CrashHarness | undefined;
const spans = recordSpansInFile(async () => {
  await h?.close();
  h = undefined;
});

const never = () => new Promise<never>(() => {});

describe('a trace across a restart', () => {
  it('puts the turn taken again after a crash in the trace of its message, marked resumed', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    let first = true;
    h.llm.respond(async () => {
      if (first) {
        first = false;
        return never(); // the model is still thinking when the bridge dies
      }
      return { content: 'Answered after the restart.' };
    });
    await h.platform.say('@code hello?');
    await until(() => h?.llm.requests.length === 1);
    const [root] = spans.named('message');
    expect(root).toBeDefined();
    await h.restart();
    await until(() => h?.platform.posts().length === 1);
    await h.bridge.idle();
    await vi.waitFor(() => expect(spans.named('post')).toHaveLength(1), { timeout: 30_000, interval: 20 });
    const turns = spans.named('chat code');
    // The cut turn never ended (its process died); the one taken again did.
    expect(turns).toHaveLength(1);
    const [again] = turns;
    expect(again && traceOf(again)).toBe(root && traceOf(root));
    expect(again?.parentSpanContext?.spanId).toBe(root?.spanContext().spanId);
    expect(attr(again, 'roundtable.resumed')).toBe(true);
    expect(again?.events.map((e) => e.name)).toContain('roundtable.resumed');
    expect(attr(again, 'roundtable.outcome')).toBe('reply');
  }, 60_000);

  it('puts a post re-sent after a crash in the trace of its message, marked re-sent', async () => {
    h = await startCrashHarness({ agents: [{ name: 'code' }] });
    h.llm.respond(() => ({ content: 'Posted twice?' }));
    let crashed = false;
    h.platform.crashOnPost = () => {
      if (crashed) return false;
      crashed = true;
      return true; // the reply is created on the platform, then the bridge dies before hearing back
    };
    await h.platform.say('@code hello?');
    await until(() => crashed);
    const [root] = spans.named('message');
    expect(root).toBeDefined();
    await h.restart();
    await h.bridge.idle();
    await vi.waitFor(
      () => expect(spans.named('post').filter((s) => attr(s, 'roundtable.resent') === true)).toHaveLength(1),
      {
        timeout: 30_000,
        interval: 20,
      },
    );
    const [resent] = spans.named('post').filter((s) => attr(s, 'roundtable.resent') === true);
    expect(resent && traceOf(resent)).toBe(root && traceOf(root));
    expect(resent?.events.map((e) => e.name)).toContain('roundtable.resent');
    expect(h.platform.posts()).toHaveLength(1);
  }, 60_000);
});
