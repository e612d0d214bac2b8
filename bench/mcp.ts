/**
 * MCP benchmark: the added latency of an MCP tool call through the bridge (the agent's tool: arguments validated
 * against the schema, the call with its signal and timeout, the result read into text, metrics) over the bare SDK
 * client calling the same tool of the same server, in the same run, calls interleaved. The reference server
 * (`@modelcontextprotocol/server-everything`, its `echo` tool) over stdio — on the host, and through a
 * `SandboxProcess` transport backed by a host process, through the real Docker sandbox (the server in a room's
 * container, started with `Sandbox.spawn`; the bare client on a second server process in the same container) — and
 * over Streamable HTTP. Goal: under 5 ms added at p50 on each.
 *   npm run bench:mcp [-- --smoke]   (RUNS=300 by default in a full run)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { checkDocker, createDockerSandbox } from '../sandbox/index.js';
import { readSettings } from '../src/config/index.js';
import type { McpServerConfig } from '../src/config/mcp-servers.js';
import { silentLogger } from '../src/log.js';
import { McpPool } from '../src/mcp/pool.js';
import { ProcessTransport } from '../src/mcp/process-transport.js';
import type { Sandbox } from '../src/ports.js';
import type { Tool, ToolContext } from '../src/tools/tool.js';
import { hostProcess } from '../test/fakes/host-process.js';
import { isCi } from '../test/sandbox/docker-setup.js';
import { reportGoal, reportSkipped } from './lib/goals.js';
import { sized, smoke } from './lib/mode.js';

const RUNS = sized(Number(process.env.RUNS ?? 300), 30);
const WARM_UP = sized(30, 5);
const GOAL_MS = 5;
const EVERYTHING = path.resolve('node_modules/.bin/mcp-server-everything');
const ARGS = { message: 'benchmark' };

const hostSandbox: Sandbox = {
  exec: async () => ({ output: '', exitCode: 0, timedOut: false }),
  close: async () => {},
  spawn: (_key, spec) => hostProcess(spec),
};
const ROOM = 'console:bench-mcp';
const contextFor = (sandbox: Sandbox): ToolContext => ({
  agent: 'bench',
  channelKey: ROOM,
  sandbox,
  commandTimeoutMs: 30_000,
  signal: new AbortController().signal,
});

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
async function measure(label: string, server: McpServerConfig, bare: Client, sandbox = hostSandbox): Promise<void> {
  const pool = new McpPool({ sandbox, log: silentLogger() });
  const context = contextFor(sandbox);
  try {
    const tools: Tool[] = await pool.toolsFor(ROOM, { name: 'bench', mcp: [server] } as never);
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

/** The server in a room's container of the real Docker sandbox: the bridge's pool and a bare SDK client, each on a
 * server process of its own started with `Sandbox.spawn` in the same container. */
async function measureDocker(): Promise<void> {
  const label = 'stdio in the Docker sandbox';
  const results = await checkDocker(readSettings({ SANDBOX_IMAGE: process.env.SANDBOX_IMAGE }));
  const problem = results.find((r) => !r.ok && (r.item === 'Docker engine' || r.item.startsWith('sandbox image')));
  if (problem) {
    // Like bench/sandbox: a smoke run outside CI goes on without Docker; a full run or CI needs it.
    if (!smoke || isCi(process.env.CI)) throw new Error(`mcp ${label}: ${problem.item} ${problem.detail}`);
    reportSkipped(`mcp ${label}: ${problem.item} ${problem.detail} (CI=true makes it required)`);
    return;
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'roundtable-bench-'));
  const settings = readSettings({
    SANDBOX_IMAGE: process.env.SANDBOX_IMAGE,
    DATA_DIR: dataDir,
    SANDBOX_IDLE_MINUTES: '0',
  });
  const sandbox = createDockerSandbox({ settings, logger: silentLogger() });
  try {
    const spawned = await (sandbox.spawn as NonNullable<Sandbox['spawn']>)(ROOM, {
      command: 'mcp-server-everything',
      args: ['stdio'],
      env: {},
    });
    const bare = await bareClient(new ProcessTransport(async () => spawned));
    const server: McpServerConfig = {
      kind: 'stdio',
      name: 'everything',
      command: 'mcp-server-everything',
      args: ['stdio'],
      env: {},
      run: 'sandbox',
    };
    await measure(label, server, bare, sandbox);
    await bare.close();
  } finally {
    await sandbox.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

let http: ChildProcess | undefined;
try {
  const a = await hostBare();
  await measure('stdio (run: host)', stdio('host'), a);
  await a.close();
  const b = await hostBare();
  await measure('stdio (SandboxProcess transport)', stdio('sandbox'), b);
  await b.close();
  await measureDocker();

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
