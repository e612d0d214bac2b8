/**
 * The bridge's MCP client as the conformance suite's client under test (`npx conformance client --command
 * "tsx scripts/mcp-conformance-client.ts" --scenario <name>`): the suite appends the server's URL and names the
 * scenario in MCP_CONFORMANCE_SCENARIO. It uses the bridge's own code — the connection (src/mcp/connection.ts) and
 * the tools an agent gets (src/mcp/tools.ts) — and makes the calls a model would.
 */
import type { HttpServer } from '../src/config/mcp-servers.js';
import { silentLogger } from '../src/log.js';
import { McpConnection } from '../src/mcp/connection.js';
import { mcpTools } from '../src/mcp/tools.js';
import type { Sandbox } from '../src/ports.js';

/** What each scenario's tools are called with, as a model would call them. */
const CALLS: Readonly<Record<string, Readonly<Record<string, Record<string, unknown>>>>> = {
  tools_call: { add_numbers: { a: 5, b: 3 } },
  'sse-retry': { test_reconnection: {} },
};

/** No sandbox: results with files say they were not kept. */
const sandbox: Sandbox = {
  exec: async () => ({ output: '', exitCode: 1, timedOut: false }),
  close: async () => {},
};

async function main(): Promise<number> {
  const url = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (!url?.startsWith('http')) {
    console.error('usage: mcp-conformance-client.ts <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)');
    return 2;
  }
  const server: HttpServer = { kind: 'http', name: 'conformance', url, headers: {} };
  const connection = new McpConnection({ server, log: silentLogger() });
  try {
    await connection.ready();
    const { tools } = mcpTools([{ handle: { connection }, tools: connection.tools }], []);
    for (const [name, args] of Object.entries(CALLS[scenario] ?? {})) {
      const tool = tools.find((t) => t.name === `conformance__${name}`);
      if (!tool) throw new Error(`the server lists no ${name}`);
      const result = await tool.run(args, {
        agent: 'conformance',
        channelKey: 'conformance:client',
        sandbox,
        commandTimeoutMs: 20_000,
        signal: AbortSignal.timeout(25_000),
      });
      console.log(`${name}: ${result.status}: ${result.output}`);
      if (result.status !== 'ok') return 1;
    }
    return 0;
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 1;
  } finally {
    await connection.close();
  }
}

process.exitCode = await main();
