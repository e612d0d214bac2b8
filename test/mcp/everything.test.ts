/**
 * The bridge's MCP client against the reference server (`@modelcontextprotocol/server-everything`): over stdio on the
 * host (`run: host`), over stdio through a `SandboxProcess` (a host child process standing in for the container), and
 * over Streamable HTTP. Tools listed, a call, an image made a workspace file, the list read again on
 * `notifications/tools/list_changed`, a long call cancelled with `notifications/cancelled` on the wire.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AgentConfig } from '../../src/config/index.js';
import type { McpServerConfig } from '../../src/config/mcp-servers.js';
import { silentLogger } from '../../src/log.js';
import { McpPool } from '../../src/mcp/pool.js';
import type { Sandbox } from '../../src/ports.js';
import type { Tool, ToolContext } from '../../src/tools/tool.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { type HostProcess, hostProcess } from '../fakes/host-process.js';

const EVERYTHING = path.resolve('node_modules/.bin/mcp-server-everything');

const agentWith = (server: McpServerConfig): AgentConfig => ({ name: 'code', mcp: [server] }) as unknown as AgentConfig;

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

function contextFor(sandbox: Sandbox, signal = new AbortController().signal): ToolContext {
  return { agent: 'code', channelKey: 'test:room', sandbox, commandTimeoutMs: 20_000, signal };
}

const byName = (tools: readonly Tool[], name: string) => {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(', ')}`);
  return tool;
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-everything-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The same checks over each transport. */
function everythingSuite(name: string, setup: () => Promise<{ server: McpServerConfig; sandbox: FakeSandbox }>) {
  describe(name, () => {
    let pool: McpPool;
    let sandbox: FakeSandbox;
    let agent: AgentConfig;
    beforeAll(async () => {
      const made = await setup();
      sandbox = made.sandbox;
      agent = agentWith(made.server);
      pool = new McpPool({ sandbox, log: silentLogger() });
    });
    afterAll(async () => {
      await pool?.close();
    });

    it('lists the tools as server__tool, sorted, and calls one', async () => {
      const tools = await pool.toolsFor('test:room', agent);
      const names = tools.map((t) => t.name);
      expect(names).toContain('everything__echo');
      expect(names).toContain('everything__get-tiny-image');
      expect(names).toEqual([...names].sort());
      const result = await byName(tools, 'everything__echo').run({ message: 'hello there' }, contextFor(sandbox));
      expect(result).toMatchObject({ status: 'ok' });
      expect(result.output).toContain('hello there');
      expect(pool.status('test:room', [agent]).join('\n')).toMatch(/everything .*ready, \d+ tools/);
    });

    it('refuses arguments that do not fit the schema before calling', async () => {
      const tools = await pool.toolsFor('test:room', agent);
      const result = await byName(tools, 'everything__get-sum').run({ a: 'one', b: 2 }, contextFor(sandbox));
      expect(result.status).toBe('refused');
      expect(result.output).toMatch(/schema/);
    });

    it('writes an image result into the workspace and names the file', async () => {
      const tools = await pool.toolsFor('test:room', agent);
      const result = await byName(tools, 'everything__get-tiny-image').run({}, contextFor(sandbox));
      expect(result.status).toBe('ok');
      const saved = /image \(image\/png\) saved as \/workspace\/(mcp-files\/everything\/[^ ]+\.png)/.exec(
        result.output,
      );
      expect(saved, result.output).not.toBeNull();
      const bytes = await readFile(path.join(sandbox.workspaceDir?.('test:room') ?? '', saved?.[1] ?? ''));
      expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    });

    it('writes an embedded resource into the workspace and names the file', async () => {
      const tools = await pool.toolsFor('test:room', agent);
      const result = await byName(tools, 'everything__get-resource-reference').run(
        { resourceType: 'Text', resourceId: 3 },
        contextFor(sandbox),
      );
      expect(result.status).toBe('ok');
      const saved = /resource (\S+) saved as \/workspace\/(mcp-files\/everything\/\S+) \(\d+ bytes\)/.exec(
        result.output,
      );
      expect(saved, result.output).not.toBeNull();
      const text = await readFile(path.join(sandbox.workspaceDir?.('test:room') ?? '', saved?.[2] ?? ''), 'utf8');
      expect(text.length).toBeGreaterThan(0);
    });
  });
}

everythingSuite('server-everything over stdio on the host (run: host)', async () => ({
  server: { kind: 'stdio', name: 'everything', command: EVERYTHING, args: ['stdio'], env: {}, run: 'host' },
  sandbox: new FakeSandbox(undefined, { workspaces: dir }),
}));

everythingSuite('server-everything over stdio through a SandboxProcess', async () => {
  const sandbox = Object.assign(new FakeSandbox(undefined, { workspaces: dir }), {
    spawn: (_key: string, spec: Parameters<typeof hostProcess>[0]) => hostProcess(spec),
  });
  return {
    server: { kind: 'stdio', name: 'everything', command: EVERYTHING, args: ['stdio'], env: {}, run: 'sandbox' },
    sandbox,
  };
});

let http: ChildProcess | undefined;
afterAll(() => {
  http?.kill('SIGKILL');
});

everythingSuite('server-everything over Streamable HTTP', async () => {
  const port = await freePort();
  http = spawn(EVERYTHING, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'pipe' });
  let said = '';
  http.stderr?.on('data', (chunk: Buffer) => {
    said += chunk.toString();
  });
  await vi.waitFor(() => expect(said).toMatch(/listening on port/), { timeout: 30_000, interval: 100 });
  return {
    server: { kind: 'http', name: 'everything', url: `http://127.0.0.1:${port}/mcp`, headers: {} },
    sandbox: new FakeSandbox(undefined, { workspaces: dir }),
  };
});

describe('server-everything: list changes and cancellation on the wire', () => {
  it('reads the list again on notifications/tools/list_changed, and /pass sends notifications/cancelled', async () => {
    const processes: HostProcess[] = [];
    const sandbox = Object.assign(new FakeSandbox(undefined, { workspaces: dir }), {
      spawn: async (_key: string, spec: Parameters<typeof hostProcess>[0]) => {
        const started = await hostProcess(spec);
        processes.push(started);
        return started;
      },
    });
    const server: McpServerConfig = {
      kind: 'stdio',
      name: 'everything',
      command: EVERYTHING,
      args: ['stdio'],
      env: {},
      run: 'sandbox',
    };
    const pool = new McpPool({ sandbox, log: silentLogger() });
    try {
      const tools = await pool.toolsFor('test:room', agentWith(server));
      // The server registers its conditional tools once initialised and says so with list_changed: the client reads
      // the list again (a second tools/list on the wire) without being asked.
      const before = tools.length;
      await vi.waitFor(
        async () => {
          const wire = processes[0]?.written.join('') ?? '';
          expect(wire.match(/"method":"tools\/list"/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
        },
        { timeout: 20_000, interval: 50 },
      );
      expect((await pool.toolsFor('test:room', agentWith(server))).length).toBeGreaterThanOrEqual(before);

      const stop = new AbortController();
      const long = byName(tools, 'everything__trigger-long-running-operation');
      const running = long.run({ duration: 30, steps: 30 }, contextFor(sandbox, stop.signal));
      await vi.waitFor(() => expect(processes[0]?.written.join('')).toMatch(/"method":"tools\/call"/), {
        timeout: 20_000,
        interval: 50,
      });
      stop.abort(new Error('/pass'));
      await expect(running).rejects.toThrow('/pass');
      await vi.waitFor(() => expect(processes[0]?.written.join('')).toMatch(/"method":"notifications\/cancelled"/), {
        timeout: 20_000,
        interval: 50,
      });
    } finally {
      await pool.close();
    }
  });
});
