/**
 * The model client's side of spending limits: every call carries an output cap, and every attempt (retries
 * included) is held before it is made and settled after it.
 */
import { describe, expect, it } from 'vitest';
import { CUT_OFF_NOTE } from '../../src/llm/answer-assembler.js';
import { tokenCounter } from '../../src/llm/tokens.js';
import type { CallHold, CallMeter, LlmRequest } from '../../src/llm/types.js';
import type { LlmUsage } from '../../src/llm/usage.js';
import { SpendLimitError } from '../../src/spend/meter.js';
import { ask, useFakeServer } from '../llm/client-fixture.js';

/** A meter that records what happens to each attempt's hold. */
function recordingMeter(refuse = false): { meter: CallMeter; events: string[] } {
  const events: string[] = [];
  let n = 0;
  const meter: CallMeter = {
    async reserve(_request: LlmRequest): Promise<CallHold> {
      const id = ++n;
      if (refuse) {
        events.push(`refused ${id}`);
        throw new SpendLimitError({ kind: 'agent', name: 'a', limit: 1, day: 'd', until: 0 });
      }
      events.push(`reserve ${id}`);
      return {
        async settle(usage: LlmUsage | undefined) {
          events.push(`settle ${id} ${usage ? `${usage.input}/${usage.output}` : 'unknown'}`);
        },
        async release() {
          events.push(`release ${id}`);
        },
      };
    },
  };
  return { meter, events };
}

describe('the output cap', () => {
  const server = useFakeServer({ reasoningModels: ['o-reason'] });

  it('is sent as max_tokens, and an answer that reaches it ends with the cut-off note', async () => {
    server.fake.script('m', { content: 'x'.repeat(400) });
    const response = await server.client().complete(ask({ maxOutputTokens: 10 }));
    expect(server.fake.requests[0]?.body.max_tokens).toBe(10);
    expect(response.finishReason).toBe('length');
    expect(response.content).toBe(`${'x'.repeat(40)}\n\n[cut off: the model reached its output limit]`);
  });

  it('is sent as max_completion_tokens to a model that asks for that, from then on', async () => {
    server.fake.script('o-reason', { content: 'first' }, { content: 'second' });
    const client = server.client();
    expect((await client.complete(ask({ model: 'o-reason', maxOutputTokens: 50 }))).content).toBe('first');
    expect((await client.complete(ask({ model: 'o-reason', maxOutputTokens: 50 }))).content).toBe('second');
    expect(server.fake.requests.map((r) => [r.body.max_tokens, r.body.max_completion_tokens])).toEqual([
      [50, undefined],
      [undefined, 50],
      [undefined, 50],
    ]);
  });
});

describe('holds before each attempt', () => {
  const server = useFakeServer();

  it('holds each attempt, frees one the endpoint refused with an error status, settles the one that ran', async () => {
    server.fake.script('m', { status: 503 }, { content: 'ok' });
    const { meter, events } = recordingMeter();
    const response = await server.client({ maxRetries: 1 }).complete(ask({ meter }));
    expect(response.content).toBe('ok');
    const usage = response.usage;
    expect(events).toEqual(['reserve 1', 'release 1', 'reserve 2', `settle 2 ${usage?.input}/${usage?.output}`]);
  });

  it('spends the whole hold of an attempt whose cost is not known (a stream that broke off)', async () => {
    server.fake.script('m', { content: 'half of it', dropConnectionAfter: 2 }, { content: 'all of it' });
    const { meter, events } = recordingMeter();
    await server.client({ stream: true, maxRetries: 1 }).complete(ask({ meter, onText: () => {} }));
    expect(events.slice(0, 3)).toEqual(['reserve 1', 'settle 1 unknown', 'reserve 2']);
  });

  it('makes no call that does not fit, and does not retry it', async () => {
    server.fake.script('m', { content: 'never' });
    const { meter, events } = recordingMeter(true);
    const error = await server
      .client({ maxRetries: 3 })
      .complete(ask({ meter }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SpendLimitError);
    expect(events).toEqual(['refused 1']);
    expect(server.fake.requests).toHaveLength(0);
  });
});

describe('a server that ignores the output cap', () => {
  const server = useFakeServer();
  const words = 'word '.repeat(3000);
  const counted = (text: string) => tokenCounter('gpt-4o-mini').count(text.replace(CUT_OFF_NOTE, ''));

  it('is read only up to the cap while it streams: the rest is dropped, the answer says it was cut', async () => {
    server.fake.script('gpt-4o-mini', { content: words, ignoreMaxTokens: true, chunkDelayMs: 5 });
    const { meter, events } = recordingMeter();
    const previews: string[] = [];
    const started = Date.now();
    const response = await server
      .client({ stream: true })
      .complete(ask({ model: 'gpt-4o-mini', maxOutputTokens: 50, meter, onText: (text) => previews.push(text) }));
    // The whole answer takes 3,000 chunks at 5 ms: reading stopped long before its end.
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(response.finishReason).toBe('length');
    expect(response.cutAtCap).toBe(true);
    expect(response.content.endsWith(CUT_OFF_NOTE)).toBe(true);
    expect(counted(response.content)).toBeLessThanOrEqual(50);
    expect(counted(response.content)).toBeGreaterThanOrEqual(45);
    expect(Math.max(...previews.map(counted))).toBeLessThanOrEqual(50);
    // Nothing was reported before the cut: the whole hold (the cap's worst case) is spent, never more.
    expect(events).toEqual(['reserve 1', 'settle 1 unknown']);
  });

  it('keeps what fits of a whole answer and settles the cap, not the overrun it reports', async () => {
    server.fake.script('gpt-4o-mini', { content: words, ignoreMaxTokens: true });
    const { meter, events } = recordingMeter();
    const response = await server.client().complete(ask({ model: 'gpt-4o-mini', maxOutputTokens: 50, meter }));
    expect(response.finishReason).toBe('length');
    expect(response.cutAtCap).toBe(true);
    expect(response.content.endsWith(CUT_OFF_NOTE)).toBe(true);
    expect(counted(response.content)).toBeLessThanOrEqual(50);
    expect(response.usage?.output).toBe(50);
    expect(response.outputOverrun).toBe(3750); // what the server reported it wrote
    expect(events).toEqual(['reserve 1', `settle 1 ${response.usage?.input}/50`]);
  });

  it('leaves an answer within the cap whole, as the server reported it', async () => {
    server.fake.script('gpt-4o-mini', { content: 'word '.repeat(40).trim(), ignoreMaxTokens: true });
    const response = await server
      .client({ stream: true })
      .complete(ask({ model: 'gpt-4o-mini', maxOutputTokens: 40, onText: () => {} }));
    expect(response.content).toBe('word '.repeat(40).trim());
    expect(response.finishReason).toBe('stop');
    expect(response.cutAtCap).toBeUndefined();
    expect(response.outputOverrun).toBeUndefined();
  });
});
