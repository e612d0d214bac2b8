/**
 * The official MCP conformance suite's server scenarios against `/mcp`, those that apply to what the endpoint offers
 * (tools, logging, sessions over Streamable HTTP, DNS rebinding protection). The suite sends no headers of our
 * choosing, so it reaches the endpoint through a proxy that adds an operator's token (test/mcp-serve/bearer-proxy.ts)
 * and passes everything else — the Host and Origin it sends — as it is. docs/mcp.md lists the scenarios that do not
 * apply, and why.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebHarness, type WebHarness } from '../web/web-harness.js';
import { BearerProxy } from './bearer-proxy.js';
import { operatorToken } from './mcp-harness.js';

const run = promisify(execFile);
const SUITE = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);

/** The scenarios that apply, with the checks each makes. */
const APPLICABLE = {
  'server-initialize': 1,
  ping: 1,
  'logging-set-level': 1,
  'tools-list': 1,
  'server-sse-multiple-streams': 2,
  'dns-rebinding-protection': 2,
} as const;

let h: WebHarness | undefined;
let proxy: BearerProxy | undefined;
beforeAll(async () => {
  h = await startWebHarness();
  proxy = await BearerProxy.start(h.url, await operatorToken(h, 'ana'));
});
afterAll(async () => {
  await proxy?.close();
  await h?.close();
});

describe('the MCP conformance suite against /mcp', () => {
  for (const [scenario, checks] of Object.entries(APPLICABLE)) {
    it(`passes ${scenario}`, async () => {
      const url = `http://127.0.0.1:${proxy?.port}/mcp`;
      const { stdout } = await run(process.execPath, [SUITE, 'server', '--url', url, '--scenario', scenario], {
        timeout: 60_000,
      });
      expect(stdout).toContain(`Passed: ${checks}/${checks}, 0 failed, 0 warnings`);
    }, 90_000);
  }
});
