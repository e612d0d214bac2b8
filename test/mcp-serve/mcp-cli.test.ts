/**
 * `npm run mcp`: tokens made for web room operators only and revoked by name, and the stdio server — a process an
 * MCP client starts — passing everything to a running bridge's `/mcp`, refusing to start without a working token.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { inviteMain } from '../../adapters/web/invite-cli.js';
import { mcpMain } from '../../adapters/web/mcp-cli.js';
import { parseToken, tokenPerson } from '../../src/mcp-serve/tokens.js';
import { openStore } from '../../src/store/index.js';
import { agentOf } from '../helpers/harness.js';
import { until } from '../helpers/until.js';
import { startWebHarness, type WebHarness } from '../web/web-harness.js';
import { call, history, operatorToken } from './mcp-harness.js';

const CLI = path.resolve(import.meta.dirname, '../../adapters/web/mcp-cli.ts');

let dir: string | undefined;
let h: WebHarness | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close().catch(() => {});
  client = undefined;
  await h?.close();
  h = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Runs a command line of `npm run mcp` (or `web:invite`) in a folder with one agent and a SQLite store. */
async function run(main: typeof mcpMain, argv: string[], env: Record<string, string> = {}) {
  dir ??= mkdtempSync(path.join(tmpdir(), 'rt-mcp-'));
  mkdirSync(path.join(dir, 'agents'), { recursive: true });
  writeFileSync(path.join(dir, 'agents', 'code.md'), '---\nname: code\nmodel: m\n---\nYou write code.\n');
  let out = '';
  let err = '';
  const code = await main(argv, {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    cwd: dir,
    env: { AGENTS_DIR: './agents', DATA_DIR: './data', WEB_PORT: '8088', ...env },
  });
  return { code, out, err };
}

describe('npm run mcp: tokens', () => {
  it('makes a token for an operator only, shown once and kept as a digest, and revokes them by name', async () => {
    await run(inviteMain, ['ana', '--operator']);
    await run(inviteMain, ['ben']);
    const made = await run(mcpMain, ['--new-token', 'ANA']);
    expect(made.code).toBe(0);
    const token = /^(rtmcp_[0-9a-f]{12}_[A-Za-z0-9_-]{43})$/m.exec(made.out)?.[1] ?? '';
    expect(made.out.split('\n')[0]).toBe('MCP token for ana (shown once; npm run mcp -- --revoke-token ana ends it):');
    const store = openStore(path.join(dir ?? '', 'data', 'roundtable.db'));
    try {
      expect(await tokenPerson(store.people, token, Date.now())).toEqual({ name: 'ana', operator: true });
      const { id, secret } = parseToken(token) ?? { id: '', secret: '' };
      expect(secret).toHaveLength(43);
      const kept = JSON.stringify(await store.people.token(id, Date.now()));
      expect(kept).not.toContain(secret);
      expect(await run(mcpMain, ['--new-token', 'ben'])).toMatchObject({
        code: 1,
        err: 'mcp: ben is not an operator: npm run web:invite -- ben --operator\n',
      });
      expect(await run(mcpMain, ['--new-token', 'cleo'])).toMatchObject({
        code: 1,
        err: 'mcp: nobody named "cleo" is invited: npm run web:invite -- cleo --operator\n',
      });
      expect(await run(mcpMain, ['--revoke-token', 'ana'])).toMatchObject({
        code: 0,
        out: 'ana: 1 token revoked; their clients are refused from now on.\n',
      });
      expect(await tokenPerson(store.people, token, Date.now())).toBeUndefined();
    } finally {
      await store.close();
    }
    expect((await run(mcpMain, ['--new-token', 'ana', '--revoke-token', 'ana'])).code).toBe(2);
  });
});

describe('npm run mcp: the stdio server', () => {
  it('refuses to start without a token, or with one the bridge refuses', async () => {
    h = await startWebHarness();
    const url = `${h.url}/mcp`;
    expect(await run(mcpMain, ['--url', url])).toMatchObject({
      code: 2,
      err: 'mcp: ROUNDTABLE_MCP_TOKEN is not set: make a token with npm run mcp -- --new-token <your name>\n',
    });
    const token = await operatorToken(h, 'ana');
    await h.store.people.revokeTokens('ana');
    const refused = await run(mcpMain, ['--url', url], { ROUNDTABLE_MCP_TOKEN: token });
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      /^mcp: http:\/\/127\.0\.0\.1:\d+\/mcp refused ROUNDTABLE_MCP_TOKEN or cannot be reached: /,
    );
  });

  it('takes what a client sends at once, initialize first, and answers each in turn; ends when stdin ends', async () => {
    h = await startWebHarness();
    const token = await operatorToken(h, 'ana');
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, '--url', `${h.url}/mcp`], {
      env: { ...process.env, ROUNDTABLE_MCP_TOKEN: token },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += String(chunk);
    });
    const lines = [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sh', version: '1' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_rooms', arguments: {} } },
      { jsonrpc: '2.0', id: 3, method: 'ping' },
    ];
    child.stdin.write(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    await until(() => out.split('\n').filter(Boolean).length === 3);
    const answers = out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: number; result?: Record<string, unknown>; error?: unknown });
    expect(answers.map((a) => [a.id, a.error])).toEqual([
      [1, undefined],
      [2, undefined],
      [3, undefined],
    ]);
    expect(JSON.stringify(answers[1]?.result)).toContain('web:general');
    child.stdin.end();
    expect(await exited).toBe(0);
  }, 60_000);

  it("passes an operator's agent through to the running bridge: rooms, a post an agent answers, the history", async () => {
    h = await startWebHarness();
    const harness = h;
    harness.llm.respond((request) => ({ content: agentOf(request) === 'code' ? 'Deployed.' : '[pass]' }));
    const token = await operatorToken(harness, 'ana');
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', CLI, '--url', `${harness.url}/mcp`],
      env: { ...(process.env as Record<string, string>), ROUNDTABLE_MCP_TOKEN: token },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
    client = new Client({ name: 'operator-agent', version: '1.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('post');
    await call(client, 'post', { room: 'general', text: '@code deploy it' });
    await until(async () =>
      (await history(client as Client, { room: 'general' })).messages.some((m) => m.author === 'code'),
    );
    const read = await history(client, { room: 'general' });
    expect(read.messages.map((m) => [m.author, m.text])).toEqual([
      ['ana', '@code deploy it'],
      ['code', 'Deployed.'],
    ]);
    // Revoked while connected: the next call is refused by the bridge, and the client hears why.
    await harness.store.people.revokeTokens('ana');
    await expect(client.callTool({ name: 'list_rooms', arguments: {} })).rejects.toThrow(/operator token is needed/);
    expect(stderr.join('')).toContain('an operator token is needed');
  }, 60_000);
});
