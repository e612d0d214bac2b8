/**
 * A server that misbehaves (test/fakes/broken-mcp-server.mjs) never takes the bridge down: a line that is no JSON is
 * dropped, a call that hangs times out, a crash in the middle of a call fails that call and the server is started
 * again with one line in the room, a 10 MB result is clipped, clashing names never collide, bad schemas are left out.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AgentConfig } from '../../src/config/index.js';
import type { McpServerConfig } from '../../src/config/mcp-servers.js';
import { McpPool } from '../../src/mcp/pool.js';
import { registry } from '../../src/metrics.js';
import type { Tool, ToolContext } from '../../src/tools/tool.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type HostProcess, hostProcess } from '../fakes/host-process.js';

const BROKEN = path.resolve('test/fakes/broken-mcp-server.mjs');

let dir: string;
let logFile: string;
const logLines: string[] = [];
const told: Array<{ room: string; line: string }> = [];
let pool: McpPool;

/** The server; a call's timeout is long unless a test wants one cut short (a busy machine parses 10 MB slowly). */
function serverOf(run: 'host' | 'sandbox', timeoutMs = 30_000): McpServerConfig {
  return {
    kind: 'stdio',
    name: 'broken',
    command: process.execPath,
    args: [BROKEN],
    env: { BROKEN_LOG: logFile },
    run,
    timeoutMs,
  };
}
const agentWith = (server: McpServerConfig) => ({ name: 'code', mcp: [server] }) as unknown as AgentConfig;

const sandbox = () =>
  Object.assign(new FakeSandbox(undefined, { workspaces: dir }), {
    spawn: (_key: string, spec: Parameters<typeof hostProcess>[0]) => hostProcess(spec),
  });

function context(signal = new AbortController().signal): ToolContext {
  return { agent: 'code', channelKey: 'test:room', sandbox: sandbox(), commandTimeoutMs: 20_000, signal };
}

const tool = (tools: readonly Tool[], name: string) => {
  const found = tools.find((t) => t.name === name);
  if (!found) throw new Error(`no ${name} in ${tools.map((t) => t.name).join(', ')}`);
  return found;
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-broken-'));
  logFile = path.join(dir, 'wire.log');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await pool?.close();
});

function newPool(): McpPool {
  logLines.length = 0;
  told.length = 0;
  const log = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) });
  pool = new McpPool({ sandbox: sandbox(), log, tell: (room, line) => told.push({ room, line }) });
  return pool;
}

describe.each(['sandbox', 'host'] as const)('a broken server (run: %s)', (run) => {
  it('names every tool apart from the bridge tools and each other, and leaves bad schemas out', async () => {
    const tools = await newPool().toolsFor('test:room', agentWith(serverOf(run)));
    const names = tools.map((t) => t.name);
    expect(names).toContain('broken__bash');
    expect(names).toContain('broken__x__y');
    expect(names).toContain('broken__x__y_2');
    expect(names).not.toContain('bash');
    expect(new Set(names).size).toBe(names.length);
    expect(names.some((n) => n.includes('string_schema') || n.includes('any_of'))).toBe(false);
    const leftOut = logLines.find((line) => line.includes('MCP tools left out')) ?? '';
    expect(leftOut).toContain('string_schema');
    expect(leftOut).toContain('any_of');
  });

  it('drops a line that is no JSON and reads the answer after it', async () => {
    const tools = await newPool().toolsFor('test:room', agentWith(serverOf(run)));
    const result = await tool(tools, 'broken__bad_json').run({}, context());
    expect(result).toMatchObject({ status: 'ok', output: 'after the bad line' });
  });

  it('fails a call that hangs at its timeout, and the server still answers', async () => {
    const tools = await newPool().toolsFor('test:room', agentWith(serverOf(run, 1500)));
    const result = await tool(tools, 'broken__hang').run({}, context());
    expect(result.status).toBe('failed');
    expect(result.output).toMatch(/timed out/i);
    expect((await tool(tools, 'broken__echo').run({ text: 'still here' }, context())).output).toBe('echo: still here');
  });

  it('clips a 10 MB result like command output', async () => {
    const tools = await newPool().toolsFor('test:room', agentWith(serverOf(run)));
    const result = await tool(tools, 'broken__big').run({}, context());
    expect(result.status).toBe('ok');
    expect(result.output.length).toBeLessThan(10_000);
    expect(result.output).toContain('[truncated]');
  });

  it('makes an isError result a failed run, counted under the server and its tool', async () => {
    const tools = await newPool().toolsFor('test:room', agentWith(serverOf(run)));
    const result = await tool(tools, 'broken__fails').run({}, context());
    expect(result).toMatchObject({ status: 'failed', output: '[ERROR: it went wrong]' });
    const text = await registry.metrics();
    expect(text).toMatch(/roundtable_mcp_calls_total\{server="broken",tool="fails",status="failed"\} [1-9]/);
  });

  it('fails a call cut by a crash, tells the room once, and starts the server again', async () => {
    const current = newPool();
    const agent = agentWith(serverOf(run));
    const tools = await current.toolsFor('test:room', agent);
    const result = await tool(tools, 'broken__crash').run({}, context());
    expect(result.status).toBe('failed');
    await vi.waitFor(() => expect(told).toHaveLength(1), { timeout: 20_000, interval: 50 });
    expect(told[0]).toMatchObject({ room: 'test:room' });
    expect(told[0]?.line).toMatch(/^MCP server broken stopped; starting it again in \d+s\.$/);
    await vi.waitFor(() => expect(current.status('test:room', [agent]).join('')).toMatch(/ready/), {
      timeout: 20_000,
      interval: 50,
    });
    const again = await current.toolsFor('test:room', agent);
    expect((await tool(again, 'broken__echo').run({ text: 'back' }, context())).output).toBe('echo: back');
    expect(told).toHaveLength(1);
  });
});

describe('a sandbox process ended with no code (its container went away)', () => {
  it('is started again at the next use, with no line in the room', async () => {
    const spawned: HostProcess[] = [];
    logLines.length = 0;
    told.length = 0;
    const inSandbox = Object.assign(new FakeSandbox(undefined, { workspaces: dir }), {
      spawn: async (_key: string, spec: Parameters<typeof hostProcess>[0]) => {
        const started = await hostProcess(spec);
        spawned.push(started);
        return started;
      },
    });
    pool = new McpPool({
      sandbox: inSandbox,
      log: pino({ level: 'silent' }),
      tell: (room, line) => told.push({ room, line }),
    });
    const agent = agentWith(serverOf('sandbox'));
    await pool.toolsFor('test:room', agent);
    await spawned[0]?.kill();
    await vi.waitFor(() => expect(pool.status('test:room', [agent]).join('')).toMatch(/: idle/), {
      timeout: 20_000,
      interval: 50,
    });
    const tools = await pool.toolsFor('test:room', agent);
    expect((await tool(tools, 'broken__echo').run({ text: 'again' }, context())).output).toBe('echo: again');
    expect(spawned).toHaveLength(2);
    expect(told).toEqual([]);
  });
});

describe('a server that cannot start', () => {
  it('gives no tools, says why in /status, and the turn goes on', async () => {
    const server: McpServerConfig = {
      kind: 'stdio',
      name: 'missing',
      command: path.join(dir, 'no-such-command'),
      args: [],
      env: {},
      run: 'host',
    };
    const current = newPool();
    expect(await current.toolsFor('test:room', agentWith(server))).toEqual([]);
    expect(current.status('test:room', [agentWith(server)]).join('\n')).toMatch(
      /missing \(stdio on the HOST \(run: host\)\): down — .*ENOENT/,
    );
  });

  it('a run: sandbox server where the sandbox has no long-lived processes says so', async () => {
    const current = new McpPool({ sandbox: new FakeSandbox(), log: pino({ level: 'silent' }) });
    pool = current;
    const agent = agentWith({ ...serverOf('sandbox'), name: 'inside' });
    expect(await current.toolsFor('test:room', agent)).toEqual([]);
    expect(current.status('test:room', [agent]).join('\n')).toMatch(/cannot run MCP servers/);
  });
});

describe('the wire', () => {
  it('sends notifications/cancelled when the turn is stopped during a call', async () => {
    const tools = await newPool().toolsFor('test:room', agentWith(serverOf('sandbox')));
    const stop = new AbortController();
    const running = tool(tools, 'broken__hang').run({}, { ...context(stop.signal), commandTimeoutMs: 60_000 });
    await vi.waitFor(async () => expect(await readFile(logFile, 'utf8')).toMatch(/"name":"hang"/), {
      timeout: 20_000,
      interval: 50,
    });
    stop.abort(new Error('/pass'));
    await expect(running).rejects.toThrow('/pass');
    await vi.waitFor(
      async () => expect(await readFile(logFile, 'utf8')).toMatch(/"method":"notifications\/cancelled"/),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
  });
});
