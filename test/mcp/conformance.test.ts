/**
 * The official conformance suite (`@modelcontextprotocol/conformance`) against the bridge's MCP client: the client
 * scenarios that apply (initialize, tools_call, sse-retry) run scripts/mcp-conformance-client.ts, which uses the
 * bridge's own connection and tool code. Elicitation is not offered by the client (its scenario does not apply);
 * the auth scenarios do not apply (servers are configured with headers, no OAuth). Results: docs/mcp.md.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CONFORMANCE = path.resolve('node_modules/.bin/conformance');
const CLIENT = `${path.resolve('node_modules/.bin/tsx')} ${path.resolve('scripts/mcp-conformance-client.ts')}`;

describe('MCP conformance: client scenarios', () => {
  it.each(['initialize', 'tools_call', 'sse-retry'])(
    'passes %s',
    async (scenario) => {
      const { stdout, stderr } = await run(CONFORMANCE, ['client', '--command', CLIENT, '--scenario', scenario], {
        timeout: 90_000,
      });
      const said = `${stdout}${stderr}`;
      expect(said).toMatch(/Passed: (\d+)\/\1, 0 failed/);
      expect(said).toContain('OVERALL: PASSED');
    },
    120_000,
  );
});
