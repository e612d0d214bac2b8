import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkDiscordTokens } from '../../adapters/discord/index.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { main, run } from '../../src/main.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-server/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rt-check-first-hour-'));
  mkdirSync(path.join(dir, 'agents'));
  return () => rmSync(dir, { recursive: true, force: true });
});
const agentFile = (name: string, front: string, body = `You are ${name}.`) =>
  writeFileSync(path.join(dir, 'agents', `${name}.md`), `---\nname: ${name}\nmodel: m\n${front}\n---\n${body}\n`);

async function check(env: Record<string, string>) {
  const stdout = new PassThrough();
  let printed = '';
  stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
  });
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const code = await main({ argv: ['--check'], cwd: dir, env: { LOG_LEVEL: 'silent', ...env }, stdout, stdin });
  return { code, lines: printed.trimEnd().split('\n') };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('--check: a proxy that answers with its sign-in page', () => {
  let proxy: Server;
  let base: string;
  beforeAll(async () => {
    proxy = createHttpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html><head><title>Sign in - Corp SSO</title></head><body>…</body></html>');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it('fails the endpoint, quoting the page title, instead of calling it reachable', async () => {
    agentFile('data', '');
    const { code, lines } = await check({ OPENAI_BASE_URL: base });
    expect(lines.filter((line) => line.includes('model endpoint'))).toEqual([
      `✗ model endpoint ${base} (@data): GET /models answered a web page ("Sign in - Corp SSO"), not the OpenAI API: ` +
        'a proxy or a sign-in page is in the way, or the URL is a web site; set the API address',
    ]);
    expect(code).toBe(1);
  });
});

describe('agents that share a Discord or Slack token', () => {
  it('are refused at load, naming both files', () => {
    agentFile('data', 'discord: { token_env: DISCORD_TOKEN }');
    agentFile('code', 'discord: { token_env: DISCORD_TOKEN_CODE }');
    const error = (() => {
      try {
        loadConfig({ DISCORD_TOKEN: 'same-discord-token', DISCORD_TOKEN_CODE: 'same-discord-token' }, dir);
      } catch (thrown) {
        return thrown as Error;
      }
      throw new Error('expected an error');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      'agents/data.md: discord.token_env: DISCORD_TOKEN holds the same bot token as DISCORD_TOKEN_CODE of ' +
        'agents/code.md: each agent is its own bot, with its own token (one application per agent in the developer portal)',
    );
  });
});

describe('--check: Discord out of reach', () => {
  it('says Discord cannot be reached, not that the token is wrong', async () => {
    agentFile('data', 'discord: { token_env: DISCORD_TOKEN_DATA }');
    const port = await closedPort();
    const config = loadConfig(
      { DISCORD_TOKEN_DATA: 'tok-data-000000', DISCORD_API_URL: `http://127.0.0.1:${port}/api` },
      dir,
    );
    const [line] = await checkDiscordTokens(config);
    expect(line).toEqual({
      ok: false,
      item: 'Discord @data',
      detail: `cannot reach Discord at http://127.0.0.1:${port}/api (ECONNREFUSED): the token was not tried; check the network, a proxy or DISCORD_API_URL`,
    });
  });
});

describe('a system prompt too large for the agent', () => {
  let llm: FakeOpenAI;
  beforeAll(async () => {
    llm = await startFakeOpenAI({ models: ['m'] });
  });
  afterAll(() => llm.close());

  it('fails --check and start-up, with the figures, rather than every turn', async () => {
    agentFile('data', 'context_tokens: 6000', 'word '.repeat(6000));
    const { code, lines } = await check({ OPENAI_BASE_URL: llm.baseURL, ANSWER_RESERVE_TOKENS: '1024' });
    expect(code).toBe(1);
    expect(lines.find((line) => line.includes('agent files'))).toMatch(
      /^✗ agent files: agents\/data\.md: body: the system prompt and the bridge's rules take \d+ tokens, and context_tokens \(6000\) less the answer's reserve \(1024\) leaves \d+ for them and the room: shorten the prompt, or raise context_tokens if the model takes more$/,
    );
    // npm start stops the same way, before anything opens.
    await expect(
      run({ argv: [], cwd: dir, env: { OPENAI_BASE_URL: llm.baseURL, ANSWER_RESERVE_TOKENS: '1024' } }),
    ).rejects.toThrow(/^agents\/data\.md: body: the system prompt and the bridge's rules take \d+ tokens/);
  });
});
