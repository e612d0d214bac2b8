import { afterEach, describe, expect, it } from 'vitest';
import { registry } from '../../src/metrics.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type Harness, startHarness, toolResultsOf } from '../helpers/harness.js';

let h: Harness;
afterEach(async () => h?.close());

describe('tool runs in /metrics', () => {
  it('labels a tool run by its name only when the bridge knows that tool, every other name as unknown', async () => {
    h = await startHarness({ agents: [{ name: 'rogue', tools: ['bash'] }], sandbox: new FakeSandbox() });
    const invented = [
      ...Array.from({ length: 299 }, (_, i) => ({ name: `made_up_${i}`, arguments: {} })),
      { name: 'x'.repeat(3000), arguments: {} },
    ];
    h.llm.script(
      'rogue',
      { toolCalls: [...invented, { name: 'bash', arguments: { command: 'ls' } }] },
      { content: 'ok' },
    );
    await h.adapter.say('@rogue go');
    await h.bridge.idle();
    expect(toolResultsOf(h.llm.requests[1]).filter((r) => r.startsWith('[ERROR: there is no tool named'))).toHaveLength(
      300,
    );
    const series = (await registry.metrics())
      .split('\n')
      .filter((line) => line.startsWith('roundtable_tool_runs_total{agent="rogue"'));
    expect(series.sort()).toEqual([
      'roundtable_tool_runs_total{agent="rogue",tool="bash"} 1',
      'roundtable_tool_runs_total{agent="rogue",tool="unknown"} 300',
    ]);
  });
});
