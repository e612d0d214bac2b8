/**
 * The tool journal with MCP tools: a call a crash cut is reported as cut and not made again, like bash — unless the
 * server marks the tool `idempotentHint: true`, and then it is made again when the turn is taken again.
 */
import { describe, expect, it } from 'vitest';
import { journaledTools } from '../../src/bridge/executors/tool-journal.js';
import { mcpTools } from '../../src/mcp/tools.js';
import type { ToolJournal, ToolRunRecord } from '../../src/store/port.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';

const journal: ToolJournal = {
  runs: async () => [],
  started: async () => 1,
  ended: async () => {},
};
const context: ToolContext = {
  agent: 'code',
  channelKey: 'test:room',
  sandbox: new FakeSandbox(),
  commandTimeoutMs: 1000,
  signal: new AbortController().signal,
};

function serverTools(calls: string[]) {
  const schema = { type: 'object' as const, properties: {} };
  return mcpTools(
    [
      {
        handle: {
          connection: {
            name: 'srv',
            call: async (tool: string) => {
              calls.push(tool);
              return { content: [{ type: 'text' as const, text: `did ${tool}` }] };
            },
          },
        },
        tools: [
          { name: 'lookup', inputSchema: schema, annotations: { idempotentHint: true } },
          { name: 'send', inputSchema: schema },
        ],
      },
    ],
    ['bash'],
  ).tools;
}

const cut = (tool: string): ToolRunRecord => ({
  id: 7,
  tool,
  args: '{}',
  status: 'started',
  input: '{}',
  output: null,
});

describe('MCP tools in the tool journal', () => {
  it('makes an idempotent call cut by a restart again, and reports any other as cut', async () => {
    const calls: string[] = [];
    const tools = journaledTools(
      serverTools(calls),
      journal,
      { room: 'test:room', ask: 1 },
      [cut('srv__lookup'), cut('srv__send')],
      () => 0,
    );
    const lookup = await tools.find((t) => t.name === 'srv__lookup')?.run({}, context);
    const send = await tools.find((t) => t.name === 'srv__send')?.run({}, context);
    expect(lookup).toMatchObject({ status: 'ok', output: 'did lookup' });
    expect(send).toMatchObject({ status: 'failed' });
    expect(send?.output).toMatch(/cut by a restart .* not run again/);
    expect(calls).toEqual(['lookup']);
  });
});
