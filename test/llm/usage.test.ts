import { afterEach, describe, expect, it } from 'vitest';
import { estimateCost, usageLines } from '../../src/llm/usage-report.js';
import { openStore } from '../../src/store/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('token usage', () => {
  it('records each call per agent and room, and /status shows in/cached/out here and in all rooms, with cost', async () => {
    h = await startHarness({
      agents: [
        {
          name: 'ana',
          activation: 'always',
          systemPrompt: `You plan. ${'Think before you answer. '.repeat(300)}`,
          price: { input: 2.5, cached: 1.25, output: 10 },
        },
        { name: 'ben', activation: 'mention' },
      ],
      llmUsage: 'openai',
    });
    h.llm.respond(() => ({ content: 'noted' }));
    await h.adapter.say('first');
    await h.bridge.idle();
    await h.adapter.say('second');
    await h.bridge.idle();
    await h.adapter.say('elsewhere', { channel: 'other' });
    await h.bridge.idle();

    const here = await h.store.usage.inRoom('test:room');
    expect(here).toEqual([
      { agent: 'ana', calls: 2, input: expect.any(Number), cached: expect.any(Number), output: 4 },
    ]);
    // The second call repeats the first one's long prefix: the fake's OpenAI rule reports it cached.
    expect(here[0]?.cached).toBeGreaterThanOrEqual(1024);
    const total = (await h.store.usage.total())[0];
    expect(total?.calls).toBe(3);

    const status = await h.adapter.command('status');
    const input = here[0]?.input ?? 0;
    const cached = here[0]?.cached ?? 0;
    expect(status).toContain('Tokens (this room; all rooms):');
    expect(status).toContain(
      `- @ana: ${input.toLocaleString('en-US')} in (${cached.toLocaleString('en-US')} cached), 4 out;`,
    );
    expect(status).toMatch(/; about \$0\.\d{4} here, \$0\.\d{4} in all/);
    expect(status).not.toContain('@ben:');
  });

  it('sums the figures per agent and room, cached never above input', async () => {
    const store = openStore(':memory:');
    await store.usage.add('ana', 'test:room', { input: 1000, cached: 800, output: 50 });
    await store.usage.add('ana', 'test:room', { input: 500, cached: 900, output: 5 });
    // Cached never exceeds input, whatever a server reports.
    expect(await store.usage.inRoom('test:room')).toEqual([
      { agent: 'ana', calls: 2, input: 1500, cached: 1300, output: 55 },
    ]);
    await store.close();
  });

  it('estimates cost from the price per million tokens (uncached, cached and output each at their price)', async () => {
    expect(
      estimateCost({ input: 1_000_000, cached: 400_000, output: 100_000 }, { input: 2, cached: 0.5, output: 8 }),
    ).toBeCloseTo(0.6 * 2 + 0.4 * 0.5 + 0.1 * 8);
    const none = usageLines({ room: [], total: [] }, [{ name: 'ana' }]);
    expect(none).toEqual(['Tokens: none used yet']);
  });
});
