/**
 * `--check` starts each HTTP and `run: host` MCP server once, counts its tools and names those left out, flags
 * `run: host`, and says in one line why a server would not start (a missing command, a failed handshake).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/ports.js';
import { selfCheck } from '../../src/startup-check.js';
import { FakeSandbox } from '../fakes/fake-sandbox.js';
import { hostProcess } from '../fakes/host-process.js';

const EVERYTHING = path.resolve('node_modules/.bin/mcp-server-everything');
const BROKEN = path.resolve('test/fakes/broken-mcp-server.mjs');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-check-mcp-'));
  mkdirSync(path.join(dir, 'agents'));
  return () => rmSync(dir, { recursive: true, force: true });
});

async function mcpLines(mcp: string, sandbox?: Sandbox): Promise<string[]> {
  writeFileSync(path.join(dir, 'agents', 'code.md'), `---\nname: code\nmodel: m\nmcp:\n${mcp}\n---\nYou code.\n`);
  const lines: string[] = [];
  await selfCheck({
    env: { OPENAI_API_KEY: 'sk-mcp-check', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    cwd: dir,
    probes: {
      docker: async () => [],
      discord: async () => [],
      slack: async () => [],
      ...(sandbox ? { sandbox: async () => sandbox } : {}),
    },
    write: (line) => lines.push(line),
  });
  return lines.filter((line) => line.includes(' MCP @'));
}

describe('--check: MCP servers', () => {
  it('starts each host server once, counts its tools, names those left out, and flags run: host', async () => {
    const lines = await mcpLines(
      [
        `  - { name: everything, command: ${EVERYTHING}, args: [stdio], run: host }`,
        `  - { name: broken, command: ${process.execPath}, args: [${BROKEN}], run: host }`,
        `  - { name: files, command: npx, args: [server-filesystem] }`,
      ].join('\n'),
    );
    expect(lines[0]).toMatch(/^✓ MCP @code everything: everything \(stdio on the HOST \(run: host\)\): \d+ tools$/);
    expect(lines[1]).toMatch(/^✓ MCP @code broken: .*: 9 tools; left out: any_of \(.*\); string_schema \(.*\)$/);
    expect(lines[2]).toBe(
      "✓ MCP @code files: files (stdio in the sandbox): starts in each room's sandbox at its first use",
    );
  });

  it('says in one line why a server does not start', async () => {
    const lines = await mcpLines(
      [
        `  - { name: missing, command: ${path.join(dir, 'nope')}, run: host }`,
        `  - { name: mute, command: ${process.execPath}, args: [-e, "console.log('hello'); process.exit(2)"], run: host }`,
        `  - { name: old, command: ${process.execPath}, args: [${BROKEN}], env: { BROKEN_PROTOCOL: 1999-01-01 }, run: host }`,
        '  - { name: nobody, url: "http://127.0.0.1:9/mcp" }',
      ].join('\n'),
    );
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^✗ MCP @code missing: .*could not start: .*ENOENT/);
    expect(lines[1]).toMatch(/^✗ MCP @code mute: .*could not start: /);
    expect(lines[2]).toMatch(/^✗ MCP @code old: .*protocol version is not supported: 1999-01-01/);
    expect(lines[3]).toMatch(/^✗ MCP @code nobody: nobody \(HTTP\): the MCP server nobody could not start: /);
    for (const line of lines) expect(line).not.toContain('\n');
  });

  it('starts a run: sandbox server once through the sandbox when it can run processes, and clears up after', async () => {
    const sandbox = Object.assign(new FakeSandbox(), {
      spawn: (_key: string, spec: Parameters<typeof hostProcess>[0]) => hostProcess(spec),
    });
    const lines = await mcpLines(`  - { name: inside, command: ${EVERYTHING}, args: [stdio] }`, sandbox);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^✓ MCP @code inside: inside \(stdio in the sandbox\): \d+ tools$/);
    expect(sandbox.resets).toEqual([{ channelKey: 'check:mcp', wipeWorkspace: true }]);
    expect(sandbox.closed).toBe(true);
  });

  it('says why a run: sandbox server does not start in the sandbox', async () => {
    const sandbox = Object.assign(new FakeSandbox(), {
      spawn: async () => {
        throw new Error('command not found in the sandbox image: npx');
      },
    });
    const lines = await mcpLines('  - { name: files, command: npx, args: [server-filesystem] }', sandbox);
    expect(lines).toEqual([
      '✗ MCP @code files: files (stdio in the sandbox): the MCP server files could not start: command not found in the sandbox image: npx',
    ]);
  });
});
