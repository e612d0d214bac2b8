/**
 * A priced MCP tool (`price_usd_per_call`): its price is held before the call, spent when the server answered, timed
 * out or was stopped, given back when the call never reached a working server, and a hold a limit refuses means no
 * call at all (the limit's error goes up to end the turn).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, vi } from 'vitest';
import { mcpTools } from '../../src/mcp/tools.js';
import type { Sandbox } from '../../src/ports.js';
import { SpendLimitError } from '../../src/spend/limits.js';
import type { ToolContext, ToolSpend } from '../../src/tools/tool.js';

const sandbox: Sandbox = { exec: async () => ({ output: '', exitCode: 0, timedOut: false }), close: async () => {} };
const echo = { name: 'echo', inputSchema: { type: 'object' as const, properties: {} } };

type Call = (tool: string, args: object, options: { signal: AbortSignal }) => Promise<CallToolResult>;

function setUp(call: Call, hold?: ToolSpend['hold']) {
  const held: string[] = [];
  const spend: ToolSpend = {
    hold:
      hold ??
      (async (nano) => {
        held.push(`hold ${nano}`);
        return {
          settle: async () => void held.push('spent'),
          release: async () => void held.push('released'),
        };
      }),
  };
  const calls = vi.fn(call);
  const { tools } = mcpTools(
    [{ handle: { connection: { name: 'paid', call: calls }, priceUsd: 0.25 }, tools: [echo] }],
    [],
  );
  const controller = new AbortController();
  const context: ToolContext = {
    agent: 'code',
    channelKey: 'discord:1',
    sandbox,
    commandTimeoutMs: 5_000,
    signal: controller.signal,
    spend,
  };
  const tool = tools[0];
  if (!tool) throw new Error('no tool');
  return { run: () => tool.run({}, context), held, calls, controller };
}

describe('a priced MCP call', () => {
  it('is held at its price, then spent when the server answered (an error result too)', async () => {
    const ok = setUp(async () => ({ content: [{ type: 'text', text: 'hi' }] }));
    expect((await ok.run()).status).toBe('ok');
    expect(ok.held).toEqual(['hold 250000000', 'spent']);
    const failed = setUp(async () => ({ content: [{ type: 'text', text: 'no' }], isError: true }));
    expect((await failed.run()).status).toBe('failed');
    expect(failed.held).toEqual(['hold 250000000', 'spent']);
  });

  it('is spent when it timed out, given back when it never reached a working server', async () => {
    const timedOut = setUp(async () => {
      throw new McpError(ErrorCode.RequestTimeout, 'Request timed out');
    });
    expect((await timedOut.run()).status).toBe('failed');
    expect(timedOut.held).toEqual(['hold 250000000', 'spent']);
    const down = setUp(async () => {
      throw new Error('the MCP server paid is down (it stopped); next try in 1s');
    });
    expect((await down.run()).status).toBe('failed');
    expect(down.held).toEqual(['hold 250000000', 'released']);
  });

  it('is spent when /pass stops it', async () => {
    // As the SDK's call does: it rejects when its signal aborts.
    const stopped = setUp(
      (_tool, _args, { signal }) =>
        new Promise<CallToolResult>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );
    const running = stopped.run();
    await vi.waitFor(() => expect(stopped.calls).toHaveBeenCalled());
    stopped.controller.abort(new Error('passed'));
    await expect(running).rejects.toThrow('passed');
    expect(stopped.held).toEqual(['hold 250000000', 'spent']);
  });

  it('is not made when a limit refuses its hold: the limit error goes up', async () => {
    const refused = setUp(
      async () => ({ content: [] }),
      async () => {
        throw new SpendLimitError({
          kind: 'bridge',
          name: 'bridge',
          limit: 1_000_000_000,
          day: '2026-11-29',
          until: 0,
        });
      },
    );
    await expect(refused.run()).rejects.toBeInstanceOf(SpendLimitError);
    expect(refused.calls).not.toHaveBeenCalled();
  });
});
