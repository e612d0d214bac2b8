/**
 * Batched observer turns (BATCHING=on) are traced as turns: one `chat <model>` span for the batched call, in the
 * trace of the message that woke the observers, with the agents it answered for and each one's share — its tokens
 * and what it made of its turn (a reply, a pass, or asked again alone).
 */
import { describe, expect, it } from 'vitest';
import { batchAgentsOf } from '../fakes/openai-server/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { attr, recordSpansInFile, traceOf } from './spans.js';

let h: Harness | undefined;
const spans = recordSpansInFile(async () => {
  await h?.close();
  h = undefined;
});

const always = (name: string) => ({ name, model: 'shared', activation: 'always' as const });

describe('a batched call, traced', () => {
  it('is one turn span in the message trace, with each agent it answered for and its share', async () => {
    h = await startHarness({ agents: [always('ana'), always('ben')], env: { BATCHING: 'on', BATCH_TICK_MS: '20' } });
    h.llm.respond((request) =>
      batchAgentsOf(request) ? { agents: { ana: 'ana here', ben: '[pass]' } } : { content: '[pass]' },
    );
    await h.adapter.say('hello');
    await h.bridge.idle();
    expect(h.adapter.transcript()).toEqual(['[@ana]: ana here']);

    const [root] = spans.named('message');
    if (!root) throw new Error('no root');
    const calls = spans.named('chat shared').filter((s) => attr(s, 'roundtable.batch') === true);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call && traceOf(call)).toBe(traceOf(root));
    expect(call?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'shared',
      'server.address': '127.0.0.1',
      'roundtable.batch': true,
      'roundtable.agents': ['ana', 'ben'],
      'roundtable.outcomes': ['ana:reply', 'ben:pass'],
    });
    expect(Number(attr(call, 'gen_ai.usage.input_tokens'))).toBeGreaterThan(0);
    // Each agent's share, as an event: its part of the call's tokens and its outcome.
    const shares = call?.events.filter((e) => e.name === 'roundtable.share') ?? [];
    expect(shares.map((e) => [e.attributes?.['gen_ai.agent.name'], e.attributes?.['roundtable.outcome']])).toEqual([
      ['ana', 'reply'],
      ['ben', 'pass'],
    ]);
    const input = shares.reduce((sum, e) => sum + Number(e.attributes?.['gen_ai.usage.input_tokens']), 0);
    expect(input).toBe(attr(call, 'gen_ai.usage.input_tokens'));
    // ana's reply is posted below the batched call's span.
    const [post] = spans.named('post');
    expect(post && spans.parentOf(post)).toBe(call);
  });
});
