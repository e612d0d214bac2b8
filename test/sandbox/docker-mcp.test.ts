import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ProcessTransport } from '../../src/mcp/process-transport.js';
import type { Sandbox } from '../../src/ports.js';
import {
  DOCKER_TEST_TIMEOUT,
  dockerUp,
  imageHasMcpServers,
  runDockerTests,
  SandboxHarness,
  sandboxImage,
} from './docker-harness.js';
import { isCi } from './docker-setup.js';

const T = { timeoutMs: 20_000 };
const servers = runDockerTests && dockerUp && (await imageHasMcpServers(sandboxImage).catch(() => false));
const BUILD =
  'SANDBOX_MCP_PACKAGES="@modelcontextprotocol/server-filesystem @modelcontextprotocol/server-everything" npm run sandbox:build';
if (runDockerTests && !servers && !isCi(process.env.CI)) {
  console.warn(
    `MCP server tests skipped: ${sandboxImage} carries no Node MCP servers (${BUILD} adds them; CI=true makes them required)`,
  );
}

/** The SDK's client over a server process in the room's sandbox container. */
async function connect(sandbox: Sandbox, key: string, command: string, args: string[]): Promise<Client> {
  const child = await (sandbox.spawn as NonNullable<Sandbox['spawn']>)(key, { command, args, env: {} });
  const client = new Client({ name: 'roundtable-test', version: '1.0.0' });
  await client.connect(new ProcessTransport(async () => child));
  return client;
}

const text = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as { type: string; text?: string }[]).map((part) => part.text ?? '').join('\n');

describe.skipIf(!runDockerTests || (!servers && !isCi(process.env.CI)))(
  'Real MCP servers in the sandbox (real engine)',
  { timeout: DOCKER_TEST_TIMEOUT },
  () => {
    const harness = new SandboxHarness();
    const sandbox = harness.create();
    const clients: Client[] = [];
    afterAll(async () => {
      for (const client of clients) await client.close().catch(() => undefined);
      await harness.cleanup();
    });

    it('has the servers in the image (npm run sandbox:build with SANDBOX_MCP_PACKAGES)', () => {
      expect(servers, `${sandboxImage} carries no Node MCP servers: ${BUILD}`).toBe(true);
    });

    it("server-filesystem reads the room's /workspace, and room B's server cannot read room A's file", async () => {
      await sandbox.exec('discord:mcp-a', 'echo "written by room A" > note-a.txt', T);
      await sandbox.exec('discord:mcp-b', 'echo "room B" > note-b.txt', T);
      const inA = await connect(sandbox, 'discord:mcp-a', 'mcp-server-filesystem', ['/workspace']);
      const inB = await connect(sandbox, 'discord:mcp-b', 'mcp-server-filesystem', ['/workspace']);
      clients.push(inA, inB);

      const { tools } = await inA.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_text_file', 'list_directory']));

      const read = await inA.callTool({ name: 'read_text_file', arguments: { path: '/workspace/note-a.txt' } });
      expect(read.isError).toBeFalsy();
      expect(text(read)).toBe('written by room A\n');

      const listing = await inB.callTool({ name: 'list_directory', arguments: { path: '/workspace' } });
      expect(text(listing)).toContain('note-b.txt');
      expect(text(listing)).not.toContain('note-a.txt');
      const stolen = await inB.callTool({ name: 'read_text_file', arguments: { path: '/workspace/note-a.txt' } });
      expect(stolen.isError).toBe(true);
      expect(text(stolen)).not.toContain('written by room A');
      // Nor through the host's path of room A's workspace, which is not in B's container at all.
      const hostPath = `${sandbox.workspaceDir?.('discord:mcp-a')}/note-a.txt`;
      const outside = await inB.callTool({ name: 'read_text_file', arguments: { path: hostPath } });
      expect(outside.isError).toBe(true);
      expect(text(outside)).not.toContain('written by room A');
    });

    it('server-everything lists its tools and answers a call', async () => {
      const client = await connect(sandbox, 'console:mcp-everything', 'mcp-server-everything', ['stdio']);
      clients.push(client);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      const echoed = await client.callTool({ name: 'echo', arguments: { message: 'from the sandbox' } });
      expect(text(echoed)).toBe('Echo: from the sandbox');
    });

    it('a server ends with its room: /reset closes the transport', async () => {
      const key = 'console:mcp-reset';
      const client = await connect(sandbox, key, 'mcp-server-everything', ['stdio']);
      let closed = false;
      client.onclose = () => {
        closed = true;
      };
      await sandbox.reset?.(key);
      await vi.waitFor(() => expect(closed).toBe(true), { timeout: 60_000, interval: 50 });
      await expect(client.listTools()).rejects.toThrow();
    });
  },
);
