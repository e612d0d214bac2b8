/**
 * MCP benchmark: the added latency of an MCP tool call through the bridge (the agent's tool: arguments validated
 * against the schema, the call with its signal and timeout, the result read into text, metrics) over the bare SDK
 * client calling the same tool of the same server, in the same run, calls interleaved. The reference server
 * (`@modelcontextprotocol/server-everything`, its `echo` tool) over stdio — on the host, and through a
 * `SandboxProcess` transport backed by a host process, as a room's sandbox runs it — and over Streamable HTTP.
 * Goal: under 5 ms added at p50 on each.
 *   npm run bench:mcp [-- --smoke]   (RUNS=300 by default in a full run)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServerConfig } from '../src/config/mcp-servers.js';
import { silentLogger } from '../src/log.js';
import { McpPool } from '../src/mcp/pool.js';
import type { Sandbox } from '../src/ports.js';
import type { Tool, ToolContext } from '../src/tools/tool.js';
import { hostProcess } from '../test/fakes/host-process.js';
import { reportGoal } from './lib/goals.js';
import { sized } from './lib/mode.js';

const RUNS = sized(Number(process.env.RUNS ?? 300), 30);
const WARM_UP = sized(30, 5);
const GOAL_MS = 5;
const EVERYTHING = path.resolve('node_modules/.bin/mcp-server-everything');
const ARGS = { message: 'benchmark' };

const sandbox: Sandbox = {
  exec: async () => ({ output: '', exitCode: 0, timedOut: false }),
  close: async () => {},
  spawn: (_key, spec) => hostProcess(spec),
};
const context: ToolContext = {
  agent: 'bench',
  channelKey: 'bench:mcp',
  sandbox,
  commandTimeoutMs: 30_000,
  signal: new AbortController().signal,
};

function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function time(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The bridge's tool and a bare SDK client on the same server; each call of one is followed by one of the other. */
async function measure(label: string, server: McpServerConfig, bare: Client): Promise<void> {
  const pool = new McpPool({ sandbox, log: silentLogger() });
  try {
    const tools: Tool[] = await pool.toolsFor('bench:mcp', { name: 'bench', mcp: [server] } as never);
    const tool = tools.find((t) => t.name === `${server.name}__echo`);
    if (!tool) throw new Error(`${label}: no echo tool`);
    const viaBridge = async () => {
      const result = await tool.run(ARGS, context);
      if (result.status !== 'ok') throw new Error(`${label}: ${result.output}`);
    };
    const direct = () => bare.callTool({ name: 'echo', arguments: ARGS });
    for (let i = 0; i < WARM_UP; i++) {
      await viaBridge();
      await direct();
    }
    const bridged: number[] = [];
    const sdk: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      if (i % 2 === 0) {
        bridged.push(await time(viaBridge));
        sdk.push(await time(direct));
      } else {
        sdk.push(await time(direct));
        bridged.push(await time(viaBridge));
      }
    }
    const p50 = percentile(bridged, 50);
    const base = percentile(sdk, 50);
    const added = p50 - base;
    console.log(
      `${label}: bridge p50 ${p50.toFixed(2)} ms, p95 ${percentile(bridged, 95).toFixed(2)} ms; bare SDK p50 ` +
        `${base.toFixed(2)} ms, p95 ${percentile(sdk, 95).toFixed(2)} ms; ratio ${(p50 / base).toFixed(2)}x`,
    );
    reportGoal({
      figure: `mcp ${label}: ${added.toFixed(2)} ms added at p50 over the bare SDK client`,
      goal: `< ${GOAL_MS} ms`,
      met: added < GOAL_MS,
      how: `${RUNS} echo calls each, interleaved, after ${WARM_UP} warm-up calls; the same server, two connections`,
    });
  } finally {
    await pool.close();
  }
}

async function bareClient(transport: Parameters<Client['connect']>[0]) {
  const client = new Client({ name: 'bench-bare', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

const stdio = (run: 'host' | 'sandbox'): McpServerConfig => ({
  kind: 'stdio',
  name: 'everything',
  command: EVERYTHING,
  args: ['stdio'],
  env: {},
  run,
});

const hostBare = () =>
  bareClient(
    new StdioClientTransport({ command: EVERYTHING, args: ['stdio'], env: getDefaultEnvironment(), stderr: 'ignore' }),
  );

let http: ChildProcess | undefined;
try {
  const a = await hostBare();
  await measure('stdio (run: host)', stdio('host'), a);
  await a.close();
  const b = await hostBare();
  await measure('stdio (SandboxProcess transport)', stdio('sandbox'), b);
  await b.close();

  const port = await freePort();
  const started = spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'pipe' });
  http = started;
  await new Promise<void>((resolve, reject) => {
    let said = '';
    started.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (/listening on port/.test(said)) resolve();
    });
    started.once('exit', () => reject(new Error(`the HTTP server exited: ${said}`)));
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  const c = await bareClient(new StreamableHTTPClientTransport(new URL(url)));
  await measure('Streamable HTTP', { kind: 'http', name: 'everything', url, headers: {} }, c);
  await c.close();
} finally {
  http?.kill('SIGKILL');
}
